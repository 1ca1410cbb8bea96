"""pi-protected-paths: writes outside the project or to protected files are refused, untouched.

Each kind of target is tried with ``-e``; then the package is installed by the real
``pi install`` into a throw-away environment, whose ``pi`` refuses in print mode and in a real
terminal (tmux)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.examples import (
    install_example,
    installed_terminal,
)
from tests.support.loopback import LoopbackServer, Reply, ToolCall
from tests.support.terminal import tmux_available

ATTEMPTS = [
    ToolCall("write", {"path": ".env", "content": "TOKEN=stolen\n"}),
    ToolCall("write", {"path": "../outside.txt", "content": "escaped\n"}),
    ToolCall("write", {"path": "allowed.txt", "content": "fine\n"}),
]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    return install_example(tmp_path_factory, "pi-protected-paths")


def snapshot(root: Path) -> dict[Path, bytes]:
    """Every file under ``root``, with its bytes."""
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def project():
    work = Path.cwd()
    (work / ".git").mkdir()
    (work / ".git" / "config").write_text("[core]\n")
    (work / ".env").write_text("TOKEN=secret\n")
    (work / "notes.txt").write_text("old text\n")
    return work


@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_interactive_refusals_are_shown_and_the_files_untouched(installed, project, world):
    before = snapshot(project)
    with LoopbackServer([Reply("", tool_calls=ATTEMPTS[:2]), Reply("could not write them")]) as server:
        with installed_terminal(installed, world, server, width=120) as term:
            term.send("store the token")
            term.press("Enter")
            term.wait_for("could not write them")
            term.wait_gone("esc to interrupt")
            screen = term.screen()
            assert "pi-protected-paths: refused write: .env is a protected file (.env)" in screen
            refusal = f"pi-protected-paths: refused write: ../outside.txt is outside the project directory {project}"
            assert refusal.replace(" ", "") in re.sub(r"\s+", "", screen)  # the long path wraps
            term.press("C-d")
            assert term.wait_exit() == 0
        told = json.dumps([m for m in server.requests[1]["messages"] if m["role"] == "tool"])
        assert "is a protected file" in told and "is outside the project directory" in told
    assert not (project.parent / "outside.txt").exists()
    after = snapshot(project)
    assert after == before
