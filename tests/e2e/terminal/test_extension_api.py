"""The session-control, provider, shortcut and completion parts of ``ctx`` in a real terminal
(tmux): a plugin loaded with ``-e`` (``control_plugin.py``) whose commands call them."""

from __future__ import annotations

import re

import pytest

from tests.support.interactive import session_files, terminal_pi
from tests.support.loopback import LoopbackServer, Reply
from tests.support.paths import SUPPORT
from tests.support.terminal import tmux_available

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")

PLUGIN = str(SUPPORT / "control_plugin.py")


def command(term, text: str) -> None:
    term.send(text)
    term.press("Enter")


def test_new_session_fork_and_shutdown_from_a_plugin_command(world):
    with LoopbackServer([Reply("first answer"), Reply("second answer")]) as server:
        with terminal_pi(world, server, "-e", PLUGIN) as term:
            command(term, "hello one")
            term.wait_for("first answer")
            command(term, "/mknew")
            term.wait_for("with-session new=True handoff=True")
            term.wait_for("mknew cancelled=False")
            command(term, "/blocknext")
            term.wait_for("next switch blocked")
            command(term, "/mknew")
            term.wait_for("mknew cancelled=True")
            command(term, "hello two")
            term.wait_for("second answer")
            command(term, "/myfork")
            term.wait_for("forked file=True")
            term.wait_for("myfork cancelled=False text=hello two")
            term.press("C-c")  # the forked message went back to the editor: clear it
            command(term, "/bye")
            term.wait_for("bye requested")
            assert term.wait_exit() == 0
        # the second request went to the new session: the first exchange is not in its context
        second = server.requests[1]
        texts = [m["content"] for m in second["messages"] if m["role"] == "user"]
        assert "hello one" not in str(texts) and "hello two" in str(texts)
    files = session_files(world)
    assert len(files) >= 2  # the first session and the new one (the fork copies an empty branch)
    assert any('"customType":"handoff"' in f.read_text().replace(" ", "") for f in files)


def test_a_plugin_shortcut_fires_survives_reload_and_is_listed_in_hotkeys(world):
    with LoopbackServer([]) as server:
        with terminal_pi(world, server, "-e", PLUGIN) as term:
            term.wait_for("Shortcut 'ctrl+c' from control_plugin conflicts with built-in")
            term.press("M-t")
            term.wait_for("shortcut fired idle=True")
            command(term, "/hotkeys")
            term.wait_for(re.compile(r"alt\+t\s+Say the shortcut fired"))
            command(term, "/myreload")
            term.wait_for("reloaded")
            before = term.screen().count("shortcut fired")
            term.press("M-t")
            term.wait_until(lambda screen: screen.count("shortcut fired") > before, what="second firing")
            term.press("C-d")
            assert term.wait_exit() == 0


def test_tab_completes_a_plugin_commands_argument(world):
    with LoopbackServer([]) as server:
        with terminal_pi(world, server, "-e", PLUGIN) as term:
            term.send("/pick g")
            term.wait_for("the third")  # completion while typing: the one match, with its description
            assert "the second" not in term.screen()
            term.press("Tab")
            term.wait_for("/pick gamma")
            term.press("Enter")  # takes the completion chosen in the menu
            term.press("Enter")  # sends the command
            term.wait_for("picked [gamma]")
            term.send("/pick ")
            term.wait_for("the second")  # every item, with its description, while typing
            term.press("Tab")
            term.wait_for("/pick alpha")  # Tab chose the first of all three
            screen = term.screen()
            assert "the first" in screen and "the second" in screen and "the third" in screen
            term.press("C-c")
            term.press("C-d")
            assert term.wait_exit() == 0


def test_a_provider_registered_at_runtime_serves_the_prompt(world):
    with LoopbackServer([Reply("answer from the runtime provider")]) as server:
        with terminal_pi(world, server, "-e", PLUGIN) as term:
            command(term, f"/addprov {server.url}")
            term.wait_for("registered rt/rt-1 selected=True")
            term.wait_for("rt-1")
            command(term, "hi there")
            term.wait_for("answer from the runtime provider")
            command(term, "/dropprov")
            term.wait_for("refused: Provider 'rt' is in use")
            command(term, "/model loop/loop-1")
            command(term, "/model rt/rt-1")  # the runtime model is selectable in /model
            command(term, "/model loop/loop-1")
            command(term, "/dropprov")
            term.wait_for("dropped=True")
            term.press("C-d")
            assert term.wait_exit() == 0
        request = server.requests[0]
        assert request["model"] == "rt-1"
        headers = {k.lower(): v for k, v in server.exchanges[0].headers.items()}
        assert headers.get("authorization") == "Bearer runtime-key"
        models = [e for f in session_files(world) for e in f.read_text().splitlines() if "model_change" in e]
        assert any('"rt"' in line and "rt-1" in line for line in models)
