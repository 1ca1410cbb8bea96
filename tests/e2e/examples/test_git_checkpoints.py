"""pi-git-checkpoints: a snapshot of the work tree each turn, ``/rewind``, restore on ``/tree``.

In-process runs (the faux provider) check what is stored and restored; then the package is
installed by the real ``pi install`` into a throw-away environment and driven in print mode and in
a real terminal (tmux). Every run is in a temporary git repository whose branch, index and stash
list are compared before and after.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.examples import example_module
from tests.support.pi import run_pi

CHECKPOINTS = example_module("pi-git-checkpoints", "pi_git_checkpoints")


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, timeout=30
    ).stdout


def write(path: str, content: str) -> dict:
    return {"name": "write", "arguments": {"path": path, "content": content}}


def test_outside_a_git_repository_it_does_nothing_and_says_so_once(isolated_environment, monkeypatch):
    work = isolated_environment["work"]
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(work.parent))
    script = [
        {"toolCalls": [write("a.txt", "x\n")]},
        {"toolCalls": [write("b.txt", "y\n")]},
        {"text": "wrote both"},
    ]
    out = run_pi("-p", "--model", "faux/faux-1", "-e", CHECKPOINTS, "write", script=script)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "wrote both"
    notice = f"pi-git-checkpoints: {work} is not in a git work tree; no checkpoints are taken"
    assert out.stderr.count(notice) == 1, out.stderr
    assert not (work / ".git").exists()
    [session_file] = (isolated_environment["agent"] / "sessions").rglob("*.jsonl")
    assert "git-checkpoint" not in session_file.read_text()
    rewind = run_pi("-c", "-p", "--model", "faux/faux-1", "-e", CHECKPOINTS, "/rewind")
    assert "is not in a git work tree; there are no checkpoints" in rewind.stdout
