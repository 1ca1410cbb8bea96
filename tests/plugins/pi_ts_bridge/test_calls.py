"""What the bridge asks of pi-host (``call`` and ``sync`` frames), answered on pi-host's ``ctx``
(the session is a stand-in; no bridge process)."""

from __future__ import annotations

import asyncio

from pi_ts_bridge import calls
from pi_ts_bridge.runtime import BridgeRuntime, Extension

from pi_host.plugins.dispatch import PluginHost, PluginRecord


class FakeChannel:
    def __init__(self):
        self.sent, self.answers, self.dead = [], [], None

    def send(self, frame):
        self.sent.append(frame)

    def answer(self, ident, ok, value=None, error=None):
        self.answers.append((ident, ok, value if ok else error))


class HeadlessUI:  # the name pi-host's headless UI has: "not attached yet" in a mode with a UI
    def __init__(self):
        self.calls = []

    def set_status(self, key, text):
        self.calls.append(("status", key, text))


class FakeCtx:
    def __init__(self, has_ui=False):
        self.entries, self.has_ui, self.mode, self.cwd = [], has_ui, "rpc" if has_ui else "print", "/w"
        self.session = type("S", (), {"ui": HeadlessUI(), "is_streaming": False})()
        self.aborted = False

    @property
    def ui(self):
        return self.session.ui

    def append_entry(self, kind, data):
        self.entries.append({"type": "custom", "customType": kind, "data": data})

    def get_entries(self):
        return list(self.entries)

    def abort(self):
        self.aborted = True


def _runtime(ctx=None):
    host = PluginHost()
    runtime = BridgeRuntime(host)
    runtime.channel = FakeChannel()
    record = PluginRecord("ext", "cli", "/tmp/ext.ts")
    runtime.extensions["ext"] = Extension(runtime, record, {})
    runtime.ctx = ctx
    failures = []
    host.on_error(failures.append)
    return runtime, failures


def test_an_entry_appended_is_seen_by_the_next_getter():
    ctx = FakeCtx()
    runtime, _ = _runtime(ctx)
    calls.handle(runtime, {"t": "call", "id": 0, "op": "pi.appendEntry", "a": ["note", {"n": 1}], "x": "ext"})
    calls.handle(runtime, {"t": "sync", "id": 5, "op": "sm.getEntries", "a": [], "x": "ext"})
    assert runtime.channel.answers == [
        (5, True, [{"type": "custom", "customType": "note", "data": {"n": 1}}])
    ]
    calls.handle(runtime, {"t": "call", "id": 0, "op": "ctx.abort", "a": [], "x": "ext"})
    assert ctx.aborted  # at once, before the handler's reply is read


def test_before_a_session_fire_and_forget_calls_wait_and_others_fail():
    runtime, failures = _runtime(None)
    calls.handle(runtime, {"t": "call", "id": 0, "op": "pi.appendEntry", "a": ["early", None], "x": "ext"})
    calls.handle(runtime, {"t": "call", "id": 3, "op": "pi.setModel", "a": ["a/b"], "x": "ext"})
    calls.handle(runtime, {"t": "sync", "id": 4, "op": "pi.getActiveTools", "a": [], "x": "ext"})
    assert len(runtime.deferred) == 1
    assert runtime.channel.sent[0]["ok"] is False and "needs a session" in runtime.channel.sent[0]["e"]
    assert runtime.channel.answers[0][1] is False
    ctx = FakeCtx()
    ctx.session = type("S", (), {"ui": HeadlessUI()})()
    runtime.bind(ctx)
    assert ctx.entries == [{"type": "custom", "customType": "early", "data": None}]
    assert failures == []


def test_unknown_operations_and_failures_name_the_extension():
    runtime, failures = _runtime(FakeCtx())
    calls.handle(runtime, {"t": "call", "id": 0, "op": "pi.teleport", "a": [], "x": "ext"})
    calls.handle(
        runtime,
        {"t": "call", "id": 0, "op": "ext.report", "a": ["turn_end", "Error: boom\n    at x"], "x": "ext"},
    )
    assert [(f["plugin"], f["event"], f["error"]) for f in failures] == [
        ("ext", "pi.teleport", "pi.teleport is not supported by pi-host's bridge"),
        ("ext", "turn_end", "Error: boom"),
    ]


def test_display_calls_wait_for_a_ui_attached_after_session_start():
    ctx = FakeCtx(has_ui=True)
    runtime, _ = _runtime(ctx)

    async def scenario():
        calls.handle(runtime, {"t": "call", "id": 0, "op": "ui.setStatus", "a": ["k", "ready"], "x": "ext"})
        headless = ctx.session.ui
        assert headless.calls == []  # kept: the mode's UI is not there yet

        class RpcUI(HeadlessUI):
            pass

        ctx.session.ui = attached = type("RpcUI", (), {"calls": [], "set_status": HeadlessUI.set_status})()
        await asyncio.sleep(0.05)
        return attached.calls

    assert asyncio.run(scenario()) == [("status", "k", "ready")]
