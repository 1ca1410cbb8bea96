"""The actions a plugin takes on its session through ``ctx`` beyond the kernel's few (reference
§9.1, §9.2): messages, entries, labels, tools, model and thinking level, commands run without a
shell, and an event bus shared by every plugin of a host.

:class:`ExtensionApi` is the ``ctx`` the SDK gives every session (it extends
:class:`pi_host.session.context.ExtensionContext`), so the kernel stays small: everything here is
built on the session's public pieces.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import signal as signals
from collections.abc import Callable
from typing import Any

from pi_host.loop import events as session_events
from pi_host.protocol import CustomMessage, ImageContent, TextContent, parse_message
from pi_host.protocol.abort import AbortSignal
from pi_host.session.context import ExtensionContext
from pi_host.session.queues import QueuedMessage

DELIVERY = {"steer": "steer", "follow_up": "followUp", "next_turn": "nextTurn"}
DELIVERY.update({v: v for v in list(DELIVERY.values())})  # pi's spellings are accepted too
KILL_GRACE_S = 5.0
"""A command that ignores SIGTERM gets SIGKILL this long after it (as pi)."""


class EventBus:
    """One per host: ``emit(name, data)`` calls every ``on(name, handler)`` handler in the order
    they subscribed. A raising handler (or an async one that fails later) is reported as a failure
    of the plugin that subscribed it, and the other handlers still run."""

    def __init__(self, host: Any) -> None:
        self._host = host
        self._handlers: dict[str, list[tuple[Callable[[Any], Any], str]]] = {}

    def on(self, name: str, handler: Callable[[Any], Any], *, owner: str | None = None) -> Callable[[], None]:
        """Subscribe; returns the function that unsubscribes (calling it twice is harmless)."""
        item = (handler, owner or self._owner_of(handler))
        self._handlers.setdefault(name, []).append(item)

        def unsubscribe() -> None:
            handlers = self._handlers.get(name, [])
            if item in handlers:
                handlers.remove(item)

        return unsubscribe

    def emit(self, name: str, data: Any = None) -> None:
        for handler, owner in list(self._handlers.get(name, ())):
            try:
                result = handler(data)
            except Exception as exc:
                self._host.report(owner, f"events:{name}", exc)
                continue
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                task.add_done_callback(lambda t, o=owner: self._finished(t, o, name))

    def _finished(self, task: asyncio.Future[Any], owner: str, name: str) -> None:
        if not task.cancelled() and task.exception() is not None:
            self._host.report(owner, f"events:{name}", task.exception())  # type: ignore[arg-type]

    def _owner_of(self, handler: Callable[..., Any]) -> str:
        module = getattr(handler, "__module__", None) or "?"
        names = {record.name for record in getattr(self._host, "records", ())}
        for candidate in (module, module.rpartition(".")[2], module.partition(".")[0]):
            if candidate in names:
                return candidate
        return module


def event_bus(host: Any) -> EventBus:
    """The host's bus, made on first use."""
    bus = getattr(host, "_pi_event_bus", None)
    if bus is None:
        bus = EventBus(host)
        host._pi_event_bus = bus
    return bus


def as_custom_message(message: dict[str, Any] | CustomMessage) -> CustomMessage:
    """A :class:`CustomMessage` from one, or from pi's ``{customType, content, display, details}``
    (``custom_type`` also accepted); missing content becomes empty, as pi normalises it."""
    if isinstance(message, CustomMessage):
        return message
    if not isinstance(message, dict):
        raise TypeError("send_message takes a CustomMessage or a dict with customType and content")
    custom_type = message.get("customType", message.get("custom_type"))
    if not isinstance(custom_type, str) or not custom_type:
        raise ValueError("a custom message needs a customType")
    data = {"role": "custom", "customType": custom_type, "content": message.get("content") or []}
    if message.get("display") is not None:
        data["display"] = bool(message["display"])
    if message.get("details") is not None:
        data["details"] = message["details"]
    return parse_message(data)


class ExtensionApi(ExtensionContext):
    """``ctx`` with pi's extension actions (``pi.sendMessage`` and the rest, in Python style)."""

    # --- messages -------------------------------------------------------------------------------

    async def send_message(
        self,
        message: dict[str, Any] | CustomMessage,
        *,
        deliver_as: str = "steer",
        trigger_turn: bool = False,
    ) -> None:
        """Add a custom message (it reaches the model as user content). While a run streams it is
        steered (default) or queued as a follow-up; with ``trigger_turn=False`` while streaming it
        is appended once the run settles. When idle it is just stored, unless ``trigger_turn``
        starts a run with it. ``next_turn`` keeps it for the next prompt."""
        session, custom = self._session, as_custom_message(message)
        delivery = DELIVERY.get(deliver_as)
        if delivery is None:
            raise ValueError(f"deliver_as must be steer, follow_up or next_turn, not {deliver_as!r}")
        if delivery == "nextTurn":
            session.next_turn.append(custom)
        elif session.is_streaming and trigger_turn is not False:
            queue = session.queues.follow_up if delivery == "followUp" else session.queues.steering
            queue.append(QueuedMessage(custom, ""))  # not a typed message: no queue_update
        elif trigger_turn:
            session._check_model()
            session._start_run([custom])
        else:
            await session.add_message(custom)  # streaming: deferred until the run settles

    async def send_user_message(
        self,
        content: str | list[Any],
        *,
        deliver_as: str | None = None,
        expand_prompt_templates: bool = False,
    ) -> str | None:
        """Send a user message as if typed (input source ``extension``): it starts a run when idle;
        while streaming ``deliver_as`` (``steer`` / ``follow_up``) is required. Returns the
        disposition (``started``, ``queued``, ``handled``); a failure is reported, as pi reports
        it, and gives None. Returns once the run started: ``await ctx.wait_for_idle()`` waits."""
        text, images = _split_content(content)
        behavior = DELIVERY.get(deliver_as) if deliver_as is not None else None
        try:
            return await self._session.prompt(
                text,
                images=images,
                streaming_behavior=behavior,
                source="extension",
                wait=False,
                expand=expand_prompt_templates,
            )
        except Exception as exc:
            self._session.host.report("<runtime>", "send_user_message", exc)
            return None

    # --- entries, name, labels ------------------------------------------------------------------

    def append_entry(self, custom_type: str, data: Any = None) -> dict[str, Any]:
        """Store plugin data as a ``custom`` entry: kept in the session file (it survives resume),
        never sent to the model. Returns the stored entry; listeners see ``entry_appended``."""
        fields: dict[str, Any] = {"type": "custom", "customType": custom_type}
        if data is not None:
            fields["data"] = data
        stored = self._session.store.append(fields)
        self._session._notify(session_events.entry_appended(stored))
        return stored

    def get_entries(self) -> list[dict[str, Any]]:
        """Every entry of the session (all branches, append order; no header)."""
        return list(self._session.store.entries())

    def get_branch(self) -> list[dict[str, Any]]:
        """The entries from the root to the current leaf: what state is rebuilt from."""
        path = getattr(self._session.store, "path", None)
        return list(path()) if path is not None else self.get_entries()

    def get_custom_entries(self, custom_type: str, *, branch: bool = True) -> list[Any]:
        """The ``data`` of this plugin's ``custom`` entries of ``custom_type``, oldest first (of
        the current branch unless ``branch=False``)."""
        entries = self.get_branch() if branch else self.get_entries()
        return [
            e.get("data") for e in entries if e["type"] == "custom" and e.get("customType") == custom_type
        ]

    def get_session_name(self) -> str | None:
        name = getattr(self._session.store, "name", None)
        if isinstance(name, str):
            return name.strip() or None
        infos = [e for e in self._session.store.entries() if e["type"] == "session_info"]
        return (infos[-1].get("name") or "").strip() or None if infos else None

    def set_label(self, entry_id: str, label: str | None) -> None:
        """Label an entry (``None`` or ``""`` clears it); labels survive resume and never reach the
        model. An unknown id raises KeyError."""
        setter = getattr(self._session.store, "set_label", None)
        if setter is not None:
            setter(entry_id, label)
            return
        if not any(e.get("id") == entry_id for e in self._session.store.entries()):
            raise KeyError(f"Entry {entry_id} not found")
        self._session.store.append(
            {"type": "label", "targetId": entry_id, **({"label": label} if label else {})}
        )

    def get_label(self, entry_id: str) -> str | None:
        getter = getattr(self._session.store, "label", None)
        return getter(entry_id) if callable(getter) else None

    # --- tools ------------------------------------------------------------------------------------

    def get_active_tools(self) -> list[str]:
        return list(self._session.active_tools)

    def get_all_tools(self) -> list[dict[str, Any]]:
        """Every registered tool: ``name``, ``description``, ``parameters``, ``promptGuidelines``,
        ``sourceInfo`` (``source`` is ``builtin`` for the tools shipped with pi-host)."""
        builtin = self._session.builtin_tools
        return [
            {
                "name": name,
                "description": getattr(tool, "description", ""),
                "parameters": getattr(tool, "parameters", {}),
                "promptGuidelines": list(getattr(tool, "prompt_guidelines", None) or ()),
                "sourceInfo": {"source": "builtin" if name in builtin else "extension"},
            }
            for name, tool in self._session.all_tools.items()
        ]

    def set_active_tools(self, names: list[str]) -> None:
        """Make exactly these tools active (unknown names are ignored); from the next request."""
        tools = self._session.all_tools
        self._session.active_tools = {name: tools[name] for name in dict.fromkeys(names) if name in tools}

    # --- model and thinking level -----------------------------------------------------------------

    async def set_model(self, model: Any) -> bool:
        """Switch the session's model (a Model, ``provider/id`` or a pattern); False when its
        provider has no key. The change is recorded in the session (not in the settings); the
        thinking level follows the new model (its ``modelThinkingLevels`` entry, else
        ``defaultThinkingLevel``, else the current level), clamped to what it supports."""
        session = self._session
        if isinstance(model, str):
            provider, _, model_id = model.partition("/")
            found = session.registry.find(provider, model_id) if model_id else None
            model = found or session.registry.resolve(model)
            if model is None:
                raise LookupError(f"Unknown model {model!r}")
        registry = session.registry
        same = session.model is not None and session.model.provider == model.provider
        if registry.needs_key(model.provider) and not registry.get_api_key(model.provider):
            if not (same and session.config.api_key):
                return False
        settings = session.config.settings
        per_model = settings.get("modelThinkingLevels")
        level = per_model.get(f"{model.provider}/{model.id}") if isinstance(per_model, dict) else None
        level = level or settings.get("defaultThinkingLevel") or session.thinking_level
        await session.set_model(model)
        await self.set_thinking_level(level)
        return True

    def get_thinking_level(self) -> str:
        return self._session.thinking_level

    async def set_thinking_level(self, level: str) -> str:
        """Set the level, clamped to the model (``off`` for a model that does not reason);
        recorded and announced (``thinking_level_select``) only when it changes. Returns it."""
        from pi_host.lib.llm.tokens import clamp_thinking_level

        model = self._session.model
        effective = clamp_thinking_level(model, level) if model is not None else "off"
        if effective != self._session.thinking_level:
            await self._session.set_thinking_level(effective)
        return effective

    # --- state ------------------------------------------------------------------------------------

    def get_context_usage(self) -> dict[str, Any] | None:
        """``{tokens, contextWindow, percent}`` for the current model (tokens from the last
        response's usage plus an estimate of what came after; None right after a compaction);
        None without a model or compaction support."""
        compactor = self._session.compactor
        if self._session.model is None or compactor is None or not hasattr(compactor, "context_usage"):
            return None
        return compactor.context_usage()

    async def wait_for_idle(self) -> None:
        """Wait until the session has settled (retries, compaction retries, queued messages)."""
        await self._session.wait_for_idle()

    @property
    def events(self) -> EventBus:
        """The bus shared by every plugin of this host: ``events.on(name, handler)`` (returns an
        unsubscribe function) and ``events.emit(name, data)``."""
        return event_bus(self._session.host)

    # --- commands ---------------------------------------------------------------------------------

    async def exec(
        self,
        command: str,
        args: list[str] | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        cwd: str | None = None,
    ) -> dict[str, Any]:
        """Run a program without a shell: ``{stdout, stderr, code, killed}``. ``timeout`` (seconds)
        and ``signal`` terminate it (SIGTERM, SIGKILL 5 s later) and set ``killed``; a command ended
        by a signal reports 128 + its number as ``code``, as a shell does; one that cannot start
        reports its error on stderr with code 127."""
        return await run_command(command, list(args or ()), timeout, signal, cwd or self.cwd)


def _split_content(content: str | list[Any]) -> tuple[str, list[ImageContent] | None]:
    if isinstance(content, str):
        return content, None
    texts: list[str] = []
    images: list[ImageContent] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else getattr(part, "type", None)
        if kind == "text":
            texts.append(part["text"] if isinstance(part, dict) else part.text)
        elif kind == "image":
            images.append(part if isinstance(part, ImageContent) else ImageContent(**part))
        elif isinstance(part, TextContent):
            texts.append(part.text)
    return "\n".join(texts), images or None


async def run_command(
    command: str, args: list[str], timeout: float | None, signal: AbortSignal | None, cwd: str
) -> dict[str, Any]:
    from pi_host.lib.toolkit.local_shell import AGENT_MARKERS

    try:
        process = await asyncio.create_subprocess_exec(
            command,
            *args,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, **AGENT_MARKERS},
            start_new_session=True,
        )
    except OSError as exc:
        return {"stdout": "", "stderr": str(exc), "code": 127, "killed": False}
    killed = False

    def terminate() -> None:
        nonlocal killed
        if process.returncode is not None or killed:
            return
        killed = True
        _signal_group(process.pid, signals.SIGTERM)
        asyncio.get_running_loop().call_later(KILL_GRACE_S, _kill_if_running, process)

    remove = signal.add_listener(terminate) if signal is not None else None
    if signal is not None and signal.aborted:
        terminate()
    timer = asyncio.get_running_loop().call_later(timeout, terminate) if timeout else None
    try:
        out, err = await process.communicate()
    finally:
        if timer is not None:
            timer.cancel()
        if remove is not None:
            remove()
    code = process.returncode if process.returncode is not None else 1
    if code < 0:
        code = 128 - code
    return {
        "stdout": out.decode("utf-8", "replace"),
        "stderr": err.decode("utf-8", "replace"),
        "code": code,
        "killed": killed,
    }


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_if_running(process: Any) -> None:
    if process.returncode is None:
        _signal_group(process.pid, signals.SIGKILL)


__all__ = ["EventBus", "ExtensionApi", "as_custom_message", "event_bus", "run_command"]
