"""``pi --export`` of a session holding a lone surrogate, and an export that cannot be written.

pi writes a lone surrogate into a session file as the escape ``\\ud83d`` (a stream cut inside an
emoji). The export used to crash on it half-way, leaving the output file at 0 bytes; the page
now shows U+FFFD there, as a browser does, and a failed write keeps the previous file.
"""

from __future__ import annotations

import json
import sys
from functools import partial
from pathlib import Path

from tests.support import export_sample as sample
from tests.support.html_dom import entry_ids
from tests.support.pi import run_pi

pi = partial(run_pi, drop=lambda name: name.endswith("_API_KEY"))


def cut_emoji_line() -> str:
    entry = {
        "type": "message",
        "id": "s1",
        "parentId": "x1",
        "timestamp": "2026-12-02T09:15:00.000Z",
        "message": {"role": "user", "content": "cut \ud83d emoji and caf\u00e9", "timestamp": 1796202900000},
    }
    line = json.dumps(entry)
    assert "\\ud83d" in line
    return line


def test_a_session_holding_a_lone_surrogate_exports_a_whole_page(tmp_path, isolated_environment):
    work = isolated_environment["work"]
    source = sample.write(tmp_path / "s.jsonl", extra_lines=[cut_emoji_line()])
    done = pi("--export", str(source), "out.html", cwd=work)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "Exported to: out.html\n"
    page = (work / "out.html").read_text(encoding="utf-8")  # strict UTF-8
    assert page.endswith("</html>\n")
    assert "cut \ufffd emoji and café" in page
    assert entry_ids(page, "conversation")[-1] == "s1"


def test_a_write_that_fails_keeps_the_previous_file(tmp_path, isolated_environment):
    work = isolated_environment["work"]
    source = sample.write(tmp_path / "s.jsonl")
    (work / "out.html").write_text("the previous export\n")
    # A file size limit of 8 KiB (Python ignores SIGXFSZ, so the write fails with EFBIG).
    limited = ["bash", "-c", 'ulimit -f 8 && exec "$@"', "bash", sys.executable, "-m", "pi_host"]
    done = pi("--export", str(source), "out.html", cwd=work, command=limited)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith("pi: cannot write out.html: ") and done.stderr.count("\n") == 1
    assert (work / "out.html").read_text() == "the previous export\n"
    assert sorted(p.name for p in Path(work).iterdir()) == ["out.html"]  # no temporary file left
