"""One bridge process per plugin host (a session's runtime; ``/reload`` makes a new host, and so
a fresh process): started by the first script extension that loads, it loads every extension
in load order and serves their hooks, tools and commands.

Failures stay with the extension they belong to: a load failure is that extension's (pi-host
reports it naming the file); a handler that throws is reported under the extension's plugin
name by the bridge; a bridge that dies is reported once per extension, after which their hooks
do nothing (``--strict-plugins`` makes the first report fatal, as for every plugin failure).
"""

from __future__ import annotations

import asyncio
import atexit
import os
from typing import Any

from pi_host.plugins.dispatch import PluginHost, PluginRecord
from pi_ts_bridge import calls
from pi_ts_bridge.channel import BridgeDead, BridgeTimeout, Channel, Frame
from pi_ts_bridge.extension import Extension, ExtensionLoadError  # noqa: F401  (named here by callers)
from pi_ts_bridge.node import find_node
from pi_ts_bridge.wire import to_wire

JS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "js")
SIGNAL_CAP = 512
PING_TIMEOUT_S = 3.0


def _prompt_options(ctx: Any) -> dict[str, Any]:
    """pi's ``systemPromptOptions`` as far as pi-host knows them (it builds its prompt from context
    sources): the bridge turns edits of ``sections`` and ``selectedTools`` into their effect."""
    tools = getattr(getattr(ctx, "session", None), "active_tools", {}) or {}
    return {
        "cwd": ctx.cwd,
        "selectedTools": list(tools),
        "hiddenTools": [],
        "toolSnippets": {n: t.prompt_snippet for n, t in tools.items() if getattr(t, "prompt_snippet", None)},
        "toolGuidelines": {
            n: list(t.prompt_guidelines) for n, t in tools.items() if getattr(t, "prompt_guidelines", None)
        },
        "promptGuidelines": [],
        "sections": {},
        "appendSystemPrompt": "",
        "contextFiles": [],
        "skills": [],
    }


class BridgeRuntime:
    def __init__(self, host: PluginHost) -> None:
        self.host = host
        self.channel: Channel | None = None
        self.extensions: dict[str, Extension] = {}
        self.ctx: Any = None
        """The ctx of the session the bridge serves now (the last hook's)."""
        self.deferred: list[Frame] = []
        """Fire-and-forget calls made before any session existed (an extension's factory)."""
        self._signals: dict[int, Any] = {}
        self._signal_ids: dict[int, int] = {}
        self._next_signal = 0
        self.local_signals: dict[str, Any] = {}
        """AbortControllers standing for the extensions' own signals (dialogs' ``signal``)."""
        self.ui_backlog: list[tuple[str, tuple[Any, ...]]] = []
        """Display calls waiting for the mode's UI (see ``ops._display``)."""
        self.prompt_hint = ""
        """The system prompt before pi-host declared it (``ctx.getSystemPrompt()`` at agent_start)."""
        self.bus_names: set[str] = set()
        self.bus_from_bridge = False
        self._probe: asyncio.Future[None] | None = None
        self._closing = False

    # --- the process ----------------------------------------------------------------------------

    def start(self) -> Channel:
        if self.channel is not None and not self.channel.dead:
            return self.channel
        from pi_host.config import paths

        node = find_node(paths.agent_dir(), paths.cache_dir())
        env = dict(os.environ)
        env["PI_TS_BRIDGE_CACHE"] = os.path.join(paths.cache_dir(), "ts-bridge", "compiled")
        # Node (22.1+) keeps the V8 code it compiled for the bridge, jiti and the extensions here
        # and reuses it at the next start (about a fifth of Node's start-up CPU); a user's own
        # setting wins, older Node ignores the variable.
        env.setdefault(
            "NODE_COMPILE_CACHE", os.path.join(paths.cache_dir(), "ts-bridge", "node-compile-cache")
        )
        env.setdefault("NODE_OPTIONS", "")
        argv = [
            node,
            "--no-warnings",
            "--disable-warning=ExperimentalWarning",
            os.path.join(JS, "bridge.mjs"),
        ]
        self.channel = Channel(argv, env, os.getcwd(), self._on_frame)
        atexit.register(self.channel.close)
        return self.channel

    def load(self, record: PluginRecord) -> Extension:
        channel = self.start()
        limit = self.host.clock.limit_s or None
        try:
            snapshot = channel.request_blocking({"t": "load", "x": record.name, "path": record.origin}, limit)
        except BridgeTimeout:
            raise ExtensionLoadError(f"its factory did not return within {limit:g} s") from None
        except (RuntimeError, BridgeDead) as exc:
            raise ExtensionLoadError(str(exc)) from None
        extension = Extension(self, record, snapshot or {})
        self.extensions[record.name] = extension
        return extension

    def close(self) -> None:
        """Stop the bridge; what is still running in it (the command that called ``ctx.reload()``,
        which goes on in the old runtime as in pi) finishes first."""
        if self.channel is None:
            return
        if self.channel.busy():
            self._closing = True
            return
        self.channel.close(kill_after=0.5)

    # --- the session it serves ---------------------------------------------------------------------

    def bind(self, ctx: Any) -> None:
        """Tell the bridge which session (mode, UI, cwd) it serves when ``ctx`` is a new one."""
        if ctx is None or ctx is self.ctx or self.channel is None:
            return
        self.ctx = ctx
        mode = getattr(ctx, "mode", "print")
        self.channel.send(
            {"t": "bind", "v": {"mode": mode, "hasUI": bool(getattr(ctx, "has_ui", False)), "cwd": ctx.cwd}}
        )
        if hasattr(ctx, "session") and self.deferred:
            waiting, self.deferred = self.deferred, []
            for frame in waiting:
                self._on_frame(frame)

    def signal_id(self, signal: Any) -> int:
        """The id the bridge knows pi-host's abort signal ``signal`` by (its abort is forwarded)."""
        key = id(signal)
        found = self._signal_ids.get(key)
        if found is not None and self._signals.get(found) is signal:
            return found
        self._next_signal += 1
        ident = self._next_signal
        self._signals[ident] = signal
        self._signal_ids[key] = ident
        if len(self._signals) > SIGNAL_CAP:  # signals of finished runs: forget the oldest
            oldest = next(iter(self._signals))
            self._signal_ids.pop(id(self._signals.pop(oldest)), None)
        channel = self.channel
        if channel is not None:
            signal.add_listener(lambda: channel.send({"t": "abort", "sig": ident, "reason": signal.reason}))
        return ident

    def _ctx_signal(self, ctx: Any) -> int | None:
        signal = getattr(ctx, "signal", None) if hasattr(ctx, "session") else None
        return self.signal_id(signal) if signal is not None else None

    # --- requests --------------------------------------------------------------------------------

    async def request(self, extension: Extension, frame: Frame, on_update: Any = None) -> Any:
        channel = self.channel
        if channel is None or channel.dead:
            self.report_dead(extension)
            return None
        frame["x"] = extension.name
        try:
            return await channel.request(frame, on_update)
        except BridgeDead:
            self.report_dead(extension)
            return None
        except asyncio.CancelledError:
            # a hook timeout (or an abort): if Node itself is stuck (a handler that never yields),
            # every later call would wait for the timeout too, so a bridge that does not answer
            # a ping is stopped and its extensions are named once
            if self._probe is None or self._probe.done():
                self._probe = asyncio.ensure_future(self._check_alive(channel))
            raise
        finally:
            if self._closing and not channel.busy():
                channel.close(kill_after=0.5)

    async def _check_alive(self, channel: Channel) -> None:
        # A ping waits no longer than a hook may take (pluginHookTimeoutMs): a Node that cannot
        # answer within the time a handler is allowed is stuck, and a shorter run than the ping's
        # wait would end with the bridge never named
        wait = min(PING_TIMEOUT_S, self.host.clock.limit_s or PING_TIMEOUT_S)
        try:
            await asyncio.wait_for(channel.request({"t": "ping"}), wait)
        except (TimeoutError, BridgeDead, RuntimeError):
            if not channel.dead:
                channel.dead = "the TypeScript bridge stopped answering (a handler blocks Node's event loop) and was stopped"
                channel.close(kill_after=0)

    async def emit(self, extension: Extension, event_name: str, event: dict[str, Any], ctx: Any) -> Any:
        self.bind(ctx)
        if event_name == "agent_start" and hasattr(ctx, "session") and not ctx.get_system_prompt():
            # pi-host declares the prompt with the first request; pi knows it at agent_start
            sections = await ctx.session.build_sections()
            self.prompt_hint = "\n\n".join(text for text in sections.values() if text)
        if event_name == "before_agent_start" and not event.get("systemPromptOptions"):
            event["systemPromptOptions"] = _prompt_options(ctx)
        frame = {
            "t": "emit",
            "ev": event_name,
            "e": to_wire(event, self.signal_id),
            "sig": self._ctx_signal(ctx),
        }
        reply = await self.request(extension, frame)
        if not reply:
            return None
        value = reply.get("v")
        if isinstance(value, dict) and "selectedTools" in value:  # systemPromptOptions.selectedTools edited
            ctx.set_active_tools(value.pop("selectedTools"))
        for key, mutated in (reply.get("m") or {}).items():
            target = event.get(key)
            if isinstance(target, dict) and isinstance(mutated, dict):
                target.clear()
                target.update(mutated)  # handlers mutate in place: keep pi-host's own object
            else:
                event[key] = mutated
        return value

    def report_dead(self, extension: Extension) -> None:
        if extension.dead_reported:
            return
        extension.dead_reported = True
        reason = self.channel.dead if self.channel is not None else "the TypeScript bridge is not running"
        self.host.report(extension.name, "bridge", f"{reason}; this extension is off for the rest of the run")

    def note_unsupported(self, extension: Extension, feature: str) -> None:
        """One line per extension and feature pi-host's bridge does not provide."""
        if feature in extension.noted:
            return
        extension.noted.add(feature)
        import sys

        sys.stderr.write(f"pi: extension {extension.name!r}: {feature} is not supported by pi-host\n")
        sys.stderr.flush()

    # --- calls from the bridge -------------------------------------------------------------------

    def _on_frame(self, frame: Frame) -> None:
        try:
            if frame.get("t") == "upd":
                result = frame["cb"](frame.get("v"))
                if asyncio.iscoroutine(result):
                    asyncio.ensure_future(result)
                return
            calls.handle(self, frame)
        except BaseException as exc:  # --strict-plugins: a reported failure ends the run
            if self.channel is None or isinstance(exc, Exception):
                raise
            # raised in the pipe's callback, it would be lost: the waiting requests raise it
            self.channel.fail_all(exc)
