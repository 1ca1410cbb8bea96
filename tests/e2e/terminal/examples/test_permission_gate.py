"""pi-permission-gate: dangerous commands are denied without a UI and asked about with one.

The rules are checked directly and with ``-e``; then the package is installed by the real
``pi install`` into a throw-away environment, whose ``pi`` denies in print mode, asks an RPC
client, and asks in a real terminal (tmux) where a key answers the dialog."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.examples import (
    install_example,
    installed_terminal,
    result_text,
    session_entries,
    tool_results,
)
from tests.support.loopback import LoopbackServer, Reply
from tests.support.terminal import tmux_available


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    return install_example(tmp_path_factory, "pi-permission-gate")


def make_junk(work: Path) -> Path:
    junk = work / "junk"
    junk.mkdir()
    (junk / "keep.txt").write_text("x")
    return junk


@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_interactive_confirm_dialog_is_answered_by_a_key(installed, world):
    junk = make_junk(world["work"])
    delete = Reply.tool("bash", {"command": "rm -rf junk"})
    replies = [delete, Reply("declined, fine"), delete, Reply("deleted it")]
    with LoopbackServer(replies) as server:
        with installed_terminal(installed, world, server) as term:
            term.send("clean up")
            term.press("Enter")
            screen = term.wait_for("Allow a dangerous command?", scrollback=False)
            assert "rm -rf junk" in screen and "[y/N]" in screen
            term.send("n")
            term.wait_for("declined, fine")
            term.wait_gone("esc to interrupt")
            assert "the user declined this command (recursive forced delete)" in term.screen()
            assert (junk / "keep.txt").exists()
            term.send("clean up now")
            term.press("Enter")
            term.wait_for("Allow a dangerous command?", scrollback=False)
            assert (junk / "keep.txt").exists()  # nothing runs while the dialog waits
            term.send("y")
            term.wait_for("deleted it")
            term.wait_gone("esc to interrupt")
            term.press("C-d")
            assert term.wait_exit() == 0
        seen = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
        assert "the user declined this command" in json.dumps(seen)
    assert not junk.exists()
    declined, allowed = tool_results(session_entries(world["agent"]))
    assert "pi-permission-gate: the user declined" in result_text(declined)
    assert "pi-permission-gate" not in result_text(allowed)
