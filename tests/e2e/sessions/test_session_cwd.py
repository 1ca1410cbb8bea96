"""A resumed session runs in the directory its header names, as pi does (sessions.md: the
session's working directory for ``--session``, ``--resume``, ``/resume``, ``/import``), and a
session whose directory is gone is refused outside the terminal with pi's message."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.pi import run_pi

FAUX_PRINT = ("-p", "--model", "faux/faux-1")


def session_file(path: Path, cwd: Path) -> Path:
    header = {"type": "session", "version": 3, "id": "0193a1b2-0000-7000-8000-000000000001",
              "timestamp": "2026-11-30T10:00:00.000Z", "cwd": str(cwd)}  # fmt: skip
    user = {"type": "message", "id": "aa000001", "parentId": None, "timestamp": "2026-11-30T10:00:01.000Z",
            "message": {"role": "user", "content": "where are we?", "timestamp": 1796032801000}}  # fmt: skip
    path.write_text(json.dumps(header) + "\n" + json.dumps(user) + "\n")
    return path


def test_tools_run_in_the_sessions_own_directory(isolated_environment, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    elsewhere = isolated_environment["work"]
    path = session_file(tmp_path / "s.jsonl", project)
    script = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "pwd"}}]},
        {"text": "{{lastToolResult}}"},
    ]
    out = run_pi(*FAUX_PRINT, "--session", str(path), "go on", cwd=elsewhere, script=script)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(project.resolve())


def test_a_missing_session_directory_is_refused_with_pis_message(isolated_environment, tmp_path):
    gone = tmp_path / "renamed-away"
    path = session_file(tmp_path / "s.jsonl", gone)
    before = path.read_text()
    out = run_pi(*FAUX_PRINT, "--session", str(path), "go on", cwd=isolated_environment["work"], script=[])
    assert out.returncode == 1
    assert out.stderr.splitlines()[0] == f"pi: Stored session working directory does not exist: {gone}"
    assert f"Session file: {path}" in out.stderr and "Current working directory:" in out.stderr
    assert path.read_text() == before  # nothing written
