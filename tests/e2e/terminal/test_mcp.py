"""``/mcp`` in the interactive mode, in a real terminal (tmux): the status of each server and its
tools, and ``/mcp restart`` bringing a crashed server's tools back."""

from __future__ import annotations

import json
import re
import time

import pytest

from tests.e2e.mcp.helpers import TEST_STDIO, write_config
from tests.support.interactive import terminal_pi
from tests.support.loopback import LoopbackServer, Reply, ToolCall
from tests.support.terminal import tmux_available

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def test_slash_mcp_shows_the_servers_and_restart_brings_the_tools_back(world):
    write_config(world["agent"] / "mcp.json", {"t": {**TEST_STDIO, "exposure": "direct"}})
    replies = [
        Reply("", tool_calls=[ToolCall("mcp__t__crash", {})]),
        Reply("it crashed"),
        Reply("", tool_calls=[ToolCall("mcp__t__echo", {"text": "back"})]),
        Reply("echoed"),
    ]
    with LoopbackServer(replies) as server:
        with terminal_pi(world, server, width=110, height=40) as term:
            deadline = time.monotonic() + 30
            while True:  # servers connect in the background: ask again until this one is up
                term.send("/mcp")
                term.press("Enter")
                shown = term.wait_for(re.compile(r"t: connect(ed|ing)"), timeout=20, scrollback=False)
                if "t: connected, 4 tools" in shown or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            term.wait_for("t: connected, 4 tools", scrollback=False)
            term.wait_for("echo, big, grow, crash")
            term.send("crash the server")
            term.press("Enter")
            term.wait_for("it crashed", timeout=20)
            term.wait_for('MCP server "t"', timeout=10)  # the one line saying it went away
            term.send("/mcp restart t")
            term.press("Enter")
            term.wait_for("Restarted MCP t: connected", timeout=20)
            term.send("echo back")
            term.press("Enter")
            term.wait_for("echoed", timeout=20)
            term.press("C-d")
            assert term.wait_exit() == 0
        results = [m for m in server.requests[-1]["messages"] if m["role"] == "tool"]
        assert "kcab" in json.dumps(results[-1])  # the restarted server answered the call
