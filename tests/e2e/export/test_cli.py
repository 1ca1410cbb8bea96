"""``pi --export`` run as a user would: the real command in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import export_sample as sample
from tests.support.html_dom import entry_ids
from tests.support.paths import SESSION_FIXTURES

FIXTURES = SESSION_FIXTURES


def pi(*args: str, cwd: Path, agent: Path) -> subprocess.CompletedProcess:
    script = Path(sys.executable).parent / "pi"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "pi_host"]
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PI_CODING_AGENT_DIR"] = str(agent)
    return subprocess.run([*command, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


@pytest.fixture
def dirs(isolated_environment):
    return isolated_environment["work"], isolated_environment["agent"]


def test_export_writes_pi_s_default_name_in_the_current_directory(dirs, tmp_path):
    work, agent = dirs
    source = sample.write(tmp_path / "2026-12-02T09-14-03-512Z_abc.jsonl")
    done = pi("--export", str(source), cwd=work, agent=agent)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "Exported to: pi-session-2026-12-02T09-14-03-512Z_abc.html\n"
    page = (work / "pi-session-2026-12-02T09-14-03-512Z_abc.html").read_text(encoding="utf-8")
    assert entry_ids(page, "conversation")[-1] == "x1"


def test_export_to_a_named_file(dirs, tmp_path):
    work, agent = dirs
    source = sample.write(tmp_path / "s.jsonl")
    (work / "out").mkdir()
    done = pi("--export", str(source), "out/page.html", cwd=work, agent=agent)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Exported to: out/page.html\n"
    assert "Greeting script" in (work / "out" / "page.html").read_text(encoding="utf-8")


def test_a_session_written_by_pi_exports(dirs):
    work, agent = dirs
    done = pi("--export", str(FIXTURES / "pi_compacted.jsonl"), "c.html", cwd=work, agent=agent)
    assert done.returncode == 0, done.stderr
    page = (work / "c.html").read_text(encoding="utf-8")
    assert "After compaction: what next?" in page
    assert "Compacted earlier history" in page


def test_malformed_lines_are_a_warning_not_a_failure(dirs, tmp_path):
    work, agent = dirs
    source = sample.write(tmp_path / "s.jsonl", extra_lines=["{torn"])
    done = pi("--export", str(source), "o.html", cwd=work, agent=agent)
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
def test_failures_are_one_line_and_exit_1(dirs, tmp_path, name):
    work, agent = dirs
    args, expected = failing_case(name, tmp_path)
    done = pi("--export", *args, cwd=work, agent=agent)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", expected)
    assert list(work.iterdir()) == []
