"""The plugin object that stands for an extension: the hooks it gets from what the extension
registered, in pi-host's plugin host (the bridge process is replaced by its reply)."""

from __future__ import annotations

import asyncio

from pi_ts_bridge import plugin as plugin_module
from pi_ts_bridge.runtime import BridgeRuntime, Extension
from pi_ts_bridge.tools import ScriptTool

from pi_host.plugins.dispatch import PluginHost, PluginRecord

SNAPSHOT = {
    "events": ["tool_call", "turn_end", "cache_warming_decision"],
    "tools": [
        {
            "name": "greet",
            "description": "Greet",
            "parameters": {"type": "object", "properties": {}},
            "promptSnippet": "greets",
            "promptGuidelines": ["Use greet."],
            "defaultActive": False,
        },
    ],  # fmt: skip
    "commands": [{"name": "note", "description": "Store a note", "completes": True}],
    "shortcuts": [{"key": "ctrl+alt+n", "description": "Note"}],
    "flags": [{"name": "plan", "description": "Plan mode", "type": "boolean", "default": False}],
    "providers": [],
}


def _load(monkeypatch, snapshot=SNAPSHOT):
    host = PluginHost()
    record = PluginRecord("greeter", "cli", "/tmp/greeter.ts")
    sent = []

    def fake_load(self, rec):
        extension = Extension(self, rec, snapshot)
        self.extensions[rec.name] = extension
        return extension

    async def fake_request(self, extension, frame, on_update=None):
        sent.append((extension.name, frame))
        return {"v": {"block": True, "reason": "no"}, "m": {"input": {"command": "changed"}}}

    monkeypatch.setattr(BridgeRuntime, "load", fake_load)
    monkeypatch.setattr(BridgeRuntime, "request", fake_request)
    monkeypatch.setattr(
        BridgeRuntime, "note_unsupported", lambda self, ext, feature: sent.append(("noted", feature))
    )
    plugin = plugin_module.load_extension(host, record)
    assert host.register(plugin, record)
    return host, record, sent


def test_hooks_follow_what_the_extension_registered(monkeypatch):
    host, record, sent = _load(monkeypatch)
    assert record.hooks == [
        "on_tool_call",
        "on_turn_end",
        "register_cli_flags",
        "register_commands",
        "register_tools",
    ]
    assert ("noted", "the event 'cache_warming_decision'") in sent  # not in pi-host: one line
    [tool] = host.collect("register_tools", ctx=None)
    assert isinstance(tool, ScriptTool) and tool.name == "greet" and tool.default_active is False
    assert tool.prompt_guidelines == ["Use greet."] and tool.prompt_snippet == "greets"
    note, shortcut = host.collect("register_commands")
    assert (
        note.name == "note"
        and note.complete is not None
        and note.handler.__code__.co_filename == "/tmp/greeter.ts"
    )
    assert shortcut.key == "ctrl+alt+n"
    [flag] = host.collect("register_cli_flags")
    assert (flag.name, flag.type, flag.default) == ("plan", "boolean", False)


def test_an_event_goes_to_the_bridge_and_mutations_come_back(monkeypatch):
    host, _record, sent = _load(monkeypatch)
    event = {"toolCallId": "c1", "toolName": "bash", "input": {"command": "rm -rf /"}}
    original_input = event["input"]
    result = asyncio.run(host.dispatch("tool_call", event, None))
    assert result == {"block": True, "reason": "no"}
    assert event["input"] is original_input and original_input == {"command": "changed"}  # in place
    name, frame = [item for item in sent if item[0] == "greeter"][0]
    assert (
        frame["t"] == "emit" and frame["ev"] == "tool_call" and frame["e"]["input"] == {"command": "rm -rf /"}
    )
