"""Permission modes in a real terminal (tmux): ``default`` asks in a dialog before a command runs
(the picker takes a typed filter and Enter), "always for this session" is not asked again, and
Alt+M cycles the mode shown in the footer, up to plan mode, which refuses a write."""

from __future__ import annotations

import pytest

from tests.support.interactive import terminal_pi
from tests.support.loopback import LoopbackServer, Reply
from tests.support.terminal import tmux_available

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def say(term, text: str) -> None:
    term.send(text)
    term.press("Enter")


def test_the_dialog_remembered_answers_and_alt_m(world):
    work = world["work"]
    replies = [
        Reply.tool("bash", {"command": "touch one.txt"}),
        Reply("made one"),
        Reply.tool("bash", {"command": "touch one.txt"}),
        Reply("made again"),
        Reply.tool("write", {"path": "w.txt", "content": "x"}),
        Reply("plan said no"),
    ]
    with (
        LoopbackServer(replies) as server,
        terminal_pi(world, server, "--permission-mode", "default") as term,
    ):
        term.wait_for("mode: default")
        say(term, "make one")
        screen = term.wait_for("Allow bash: touch one.txt", scrollback=False)
        assert "Allow always for this session: bash(touch one.txt)" in screen
        assert not (work / "one.txt").exists()  # nothing runs while the dialog waits
        term.send("this session")  # filters the picker to that option
        term.press("Enter")
        term.wait_for("made one")
        assert (work / "one.txt").exists()
        (work / "one.txt").unlink()
        term.wait_gone("esc to interrupt")
        say(term, "again")
        term.wait_for("made again")
        assert (work / "one.txt").exists() and "Allow bash" not in term.screen()
        term.wait_gone("esc to interrupt")
        term.press("M-m")
        term.wait_for("mode: accept-edits")
        term.press("M-m")
        term.wait_for("mode: plan")
        say(term, "write it")
        term.wait_for("plan said no")
        assert "plan mode: write is not a read-only tool" in term.scrollback(joined=True)
        assert not (work / "w.txt").exists()
        term.wait_gone("esc to interrupt")
        term.press("C-d")
        assert term.wait_exit() == 0
