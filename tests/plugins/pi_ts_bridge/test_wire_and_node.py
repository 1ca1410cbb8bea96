"""pi-host's values as extensions see them, and finding Node (in process, no Node started)."""

from __future__ import annotations

import dataclasses

import pytest
from pi_ts_bridge.node import NodeMissing, find_node, parse_version
from pi_ts_bridge.wire import camel, to_wire

from pi_host.protocol import TextContent, UserMessage
from pi_host.protocol.abort import AbortController


@dataclasses.dataclass
class Preparation:
    first_kept_entry_id: str
    tokens_before: int
    messages_to_summarize: list
    _private: int = 0


def test_messages_dataclasses_and_signals_become_pi_json():
    signal = AbortController().signal
    ids = []
    event = {
        "preparation": Preparation("e1", 120, [UserMessage(content=[TextContent(text="hi")])]),
        "signal": signal,
        "blob": b"\x00\x01",
        "other": object(),
    }
    wired = to_wire(event, lambda s: ids.append(s) or 7)
    assert wired["preparation"]["firstKeptEntryId"] == "e1"
    assert wired["preparation"]["tokensBefore"] == 120
    assert "_private" not in wired["preparation"]
    assert wired["preparation"]["messagesToSummarize"][0]["role"] == "user"
    assert wired["signal"] == {"$signal": 7} and ids == [signal]
    assert wired["blob"] == "AAE=" and wired["other"] is None
    assert to_wire({"signal": signal}) == {"signal": None}  # no id given: left out


def test_camel_case():
    assert camel("first_kept_entry_id") == "firstKeptEntryId" and camel("summary") == "summary"


def test_versions_and_a_missing_node(monkeypatch, tmp_path):
    assert parse_version("v22.19.0\n") == [22, 19, 0]
    assert parse_version("nonsense") is None
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PI_HOST_NODE", "")
    with pytest.raises(NodeMissing) as found:
        find_node(str(tmp_path / "agent"), None)
    assert "Node.js >= 22.19 (none found on PATH)" in str(found.value)
    assert "pi install --node" in str(found.value)
