"""``pi --export`` run as a user would: the real command in a subprocess."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from tests.support import export_sample as sample
from tests.support.html_dom import entry_ids
from tests.support.paths import SESSION_FIXTURES
from tests.support.pi import PI, PI_SCRIPT, run_pi

FIXTURES = SESSION_FIXTURES


def api_key(name: str) -> bool:
    return name.endswith("_API_KEY")


pi = partial(run_pi, command=PI_SCRIPT if Path(PI_SCRIPT[0]).exists() else PI, drop=api_key)
"""The ``pi`` console script (``python -m pi_host`` where there is none), with no provider key."""


@pytest.fixture
def work(isolated_environment):
    """The working directory (pi's agent dir is the test's own, ``isolated_environment["agent"]``)."""
    return isolated_environment["work"]


def test_export_writes_pi_s_default_name_in_the_current_directory(work, tmp_path):
    source = sample.write(tmp_path / "2026-12-02T09-14-03-512Z_abc.jsonl")
    done = pi("--export", str(source), cwd=work)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "Exported to: pi-session-2026-12-02T09-14-03-512Z_abc.html\n"
    page = (work / "pi-session-2026-12-02T09-14-03-512Z_abc.html").read_text(encoding="utf-8")
    assert entry_ids(page, "conversation")[-1] == "x1"


def test_export_to_a_named_file(work, tmp_path):
    source = sample.write(tmp_path / "s.jsonl")
    (work / "out").mkdir()
    done = pi("--export", str(source), "out/page.html", cwd=work)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Exported to: out/page.html\n"
    assert "Greeting script" in (work / "out" / "page.html").read_text(encoding="utf-8")


def test_a_session_written_by_pi_exports(work):
    done = pi("--export", str(FIXTURES / "pi_compacted.jsonl"), "c.html", cwd=work)
    assert done.returncode == 0, done.stderr
    page = (work / "c.html").read_text(encoding="utf-8")
    assert "After compaction: what next?" in page
    assert "Compacted earlier history" in page


def test_malformed_lines_are_a_warning_not_a_failure(work, tmp_path):
    source = sample.write(tmp_path / "s.jsonl", extra_lines=["{torn"])
    done = pi("--export", str(source), "o.html", cwd=work)
    assert done.returncode == 0
    assert done.stderr == f"pi: warning: {source}: skipped 1 malformed line (first: line 16)\n"


def failing_case(name: str, d: Path) -> tuple[list[str], str]:
    """(arguments after --export, the one stderr line) for each way an export fails."""
    if name == "missing":
        return [f"{d}/missing.jsonl"], f"pi: cannot export {d}/missing.jsonl: no such file\n"
    if name == "not-a-session":
        (d / "notes.jsonl").write_text("hello\n")
        reason = "not a pi session file: no session header (line 1 is malformed)"
        return [f"{d}/notes.jsonl"], f"pi: cannot export {d}/notes.jsonl: {reason}\n"
    source = str(sample.write(d / "s.jsonl"))
    if name == "under-a-file":
        return [source, f"{source}/x.html"], f"pi: cannot write {source}/x.html: Not a directory\n"
    return [
        source,
        f"{d}/no/such/x.html",
    ], f"pi: cannot write {d}/no/such/x.html: No such file or directory\n"


@pytest.mark.parametrize("name", ["missing", "not-a-session", "under-a-file", "missing-directory"])
def test_failures_are_one_line_and_exit_1(work, tmp_path, name):
    args, expected = failing_case(name, tmp_path)
    done = pi("--export", *args, cwd=work)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", expected)
    assert list(work.iterdir()) == []
