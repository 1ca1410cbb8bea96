"""Replaying a transcript's system messages (pi_host/protocol/transcript.py), as pi-ai's
getCurrentTools does: within one message, removals apply before additions."""

from __future__ import annotations

from pi_host.protocol import SystemMessage
from pi_host.protocol.transcript import replay_system


def _tool(name: str, description: str) -> dict:
    return {"name": name, "description": description, "parameters": {"type": "object", "properties": {}}}


def test_a_message_that_removes_and_adds_a_name_redefines_it():
    messages = [
        SystemMessage(content="prompt", tools_added=[_tool("read", "v1"), _tool("bash", "b")]),
        SystemMessage(content="", tools_removed=[{"name": "read"}], tools_added=[_tool("read", "v2")]),
    ]
    state = replay_system(messages)
    assert [(t.name, t.description) for t in state.tools.values()] == [("bash", "b"), ("read", "v2")]


def test_a_removal_alone_withdraws_the_tool():
    messages = [
        SystemMessage(content="prompt", tools_added=[_tool("read", "v1")]),
        SystemMessage(content="", tools_removed=[{"name": "read"}]),
    ]
    assert replay_system(messages).tools == {}
