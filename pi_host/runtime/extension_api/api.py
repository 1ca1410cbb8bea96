""":class:`ExtensionApi`: ``ctx`` with pi's extension actions, in Python spelling (see
:mod:`pi_host.runtime.extension_api`), and the host-wide :class:`EventBus`."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pi_host.agent.queues import QueuedMessage
from pi_host.loop import events as session_events
from pi_host.protocol import CustomMessage, ImageContent, TextContent, parse_message
from pi_host.protocol.abort import AbortSignal
from pi_host.session.context import ExtensionContext
from pi_host.session.store import TreeSessionStore

if TYPE_CHECKING:
    from pi_host.plugins.events import EventBus

DELIVERY = {"steer": "steer", "follow_up": "followUp", "next_turn": "nextTurn"}
DELIVERY.update({v: v for v in list(DELIVERY.values())})  # pi's spellings are accepted too


def event_bus(host: Any) -> EventBus:
    """The host's bus (:attr:`pi_host.plugins.dispatch.PluginHost.events`)."""
    return host.events


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
            session.run_messages([custom])
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
        self._session.notify(session_events.entry_appended(stored))
        return stored

    def get_entries(self) -> list[dict[str, Any]]:
        """Every entry of the session (all branches, append order; no header)."""
        return list(self._session.store.entries())

    def get_branch(self) -> list[dict[str, Any]]:
        """The entries from the root to the current leaf: what state is rebuilt from."""
        store = self._session.store
        return list(store.path()) if isinstance(store, TreeSessionStore) else self.get_entries()

    def get_custom_entries(self, custom_type: str, *, branch: bool = True) -> list[Any]:
        """The ``data`` of this plugin's ``custom`` entries of ``custom_type``, oldest first (of
        the current branch unless ``branch=False``)."""
        store = self._session.store
        if isinstance(store, TreeSessionStore):  # reads the tree's index, decodes no message
            return store.custom_entries(custom_type, branch)
        entries = self.get_branch() if branch else self.get_entries()
        return [
            e.get("data") for e in entries if e["type"] == "custom" and e.get("customType") == custom_type
        ]

    def get_session_name(self) -> str | None:
        store = self._session.store
        name = store.name if isinstance(store, TreeSessionStore) else None
        if isinstance(name, str):
            return name.strip() or None
        infos = [e for e in self._session.store.entries() if e["type"] == "session_info"]
        return (infos[-1].get("name") or "").strip() or None if infos else None

    def set_label(self, entry_id: str, label: str | None) -> None:
        """Label an entry (``None`` or ``""`` clears it); labels survive resume and never reach the
        model. An unknown id raises KeyError."""
        store = self._session.store
        if isinstance(store, TreeSessionStore):
            store.set_label(entry_id, label)
            return
        if not any(e.get("id") == entry_id for e in self._session.store.entries()):
            raise KeyError(f"Entry {entry_id} not found")
        self._session.store.append(
            {"type": "label", "targetId": entry_id, **({"label": label} if label else {})}
        )

    def get_label(self, entry_id: str) -> str | None:
        store = self._session.store
        return store.label(entry_id) if isinstance(store, TreeSessionStore) else None

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
        from pi_host.runtime.models import use_model

        await use_model(session, model)
        return True

    def get_thinking_level(self) -> str:
        return self._session.thinking_level

    async def set_thinking_level(self, level: str) -> str:
        """Set the level, clamped to the model (``off`` for a model that does not reason);
        recorded and announced (``thinking_level_select``) only when it changes. Returns it."""
        from pi_host.runtime.models import set_level

        return await set_level(self._session, level)

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
        env: dict[str, str | None] | None = None,
        input: str | bytes | None = None,
    ) -> dict[str, Any]:
        """Run a program without a shell: ``{stdout, stderr, code, killed}``. ``timeout`` (seconds)
        and ``signal`` terminate it (SIGTERM, SIGKILL 5 s later) and set ``killed``; a command ended
        by a signal reports 128 + its number as ``code``, as a shell does; one that cannot start
        reports its error on stderr with code 127. ``env`` adds variables to pi-host's environment
        (a None value removes one); ``input`` is written to its stdin (else stdin is empty)."""
        from pi_host.lib.toolkit.process import run_command

        return await run_command(command, list(args or ()), timeout, signal, cwd or self.cwd, env, input)

    @property
    def agent_dir(self) -> str:
        """The agent directory (``PI_CODING_AGENT_DIR``, else ``~/.pi/agent``)."""
        return self._session.tool_context.agent_dir

    @property
    def session_file(self) -> str | None:
        """The session's file (None in memory: ``--no-session``, sub-sessions)."""
        return getattr(self._session.store, "session_file", None)

    @property
    def session_id(self) -> str:
        return self._session.store.session_id

    # --- compaction -------------------------------------------------------------------------------

    def compact(
        self,
        custom_instructions: str | None = None,
        *,
        on_complete: Callable[[Any], Any] | None = None,
        on_error: Callable[[BaseException], Any] | None = None,
    ) -> asyncio.Future[Any]:
        """Compact now. Returns a task: ``await`` it for the result (None when a plugin or an
        abort cancelled it; a failure raises), or pass ``on_complete(result)`` / ``on_error(exc)``
        and do not wait (pi's ``ctx.compact({onComplete, onError})``). A failure with neither
        ``on_error`` nor an ``await`` is reported as this session's."""
        session = self._session

        async def run() -> Any:
            try:
                result = await session.compact(custom_instructions, raise_on_cancel=False)
            except Exception as exc:
                if on_error is None:
                    raise
                await _call(on_error, exc)
                return None
            if on_complete is not None:
                await _call(on_complete, result)
            return result

        task = asyncio.ensure_future(run())
        if on_complete is not None or on_error is not None:
            host = self._session.host
            task.add_done_callback(
                lambda t: (
                    None
                    if t.cancelled() or t.exception() is None
                    else host.report("<runtime>", "compact", t.exception())
                )  # type: ignore[arg-type]
            )
        return task

    async def navigate_tree(self, target_id: str, **options: Any) -> Any:
        """Move the leaf to ``target_id`` (``summarize=True``, ``custom_instructions``,
        ``replace_instructions``, ``label``), as ``/tree``: ``session_before_tree`` may cancel,
        ``session_tree`` follows. Returns ``{cancelled, newLeafId, editorText?, summaryEntry?}``."""
        return await self._session.navigate_tree(target_id, **options)

    async def set_session_name(self, name: str) -> str | None:
        """Name the session (an empty name clears it); fires ``session_info_changed``."""
        return await self._session.set_session_name(name)

    def get_system_prompt(self) -> str:
        """The system prompt the model sees (inside ``before_agent_start``: as chained so far)."""
        return self._session.system_prompt_text()

    # --- session control (modes with a UI: interactive, RPC) --------------------------------------

    async def new_session(
        self,
        *,
        setup: Callable[[Any], Any] | None = None,
        with_session: Callable[[Any], Any] | None = None,
    ) -> dict[str, bool]:
        """Replace this session by a new one, as ``/new``: ``session_before_switch`` (reason
        ``new``) may cancel. ``setup(store)`` may append entries to the new session's store before
        it is shown; ``with_session(ctx)`` then runs with the new session's ``ctx`` (this ``ctx``
        is stale after the switch). Returns ``{"cancelled": bool}``. Raises
        :class:`pi_host.runtime.switching.SwitchError` where the mode cannot replace its
        session (print, JSON, SDK)."""
        from pi_host.runtime.switching import plugin_new_session

        return await plugin_new_session(self._session, setup=setup, with_session=with_session)

    async def fork(
        self, entry_id: str, *, position: str = "before", with_session: Callable[[Any], Any] | None = None
    ) -> dict[str, Any]:
        """Continue in a new session file holding the branch before the user message
        ``entry_id`` (``position="before"``, as ``/fork``: its text goes back to the editor and is
        returned as ``text``) or up to ``entry_id`` (``"at"``, as ``/clone``).
        ``session_before_fork`` may cancel. Returns ``{"cancelled": bool, "text": str}``."""
        from pi_host.runtime.switching import plugin_fork

        return await plugin_fork(self._session, entry_id, position, with_session)

    async def switch_session(
        self, session_path: str, *, with_session: Callable[[Any], Any] | None = None
    ) -> dict[str, bool]:
        """Resume the session of ``session_path`` (relative to ``cwd``) in place of this one, as
        ``/resume``; ``session_before_switch`` (reason ``resume``) may cancel."""
        from pi_host.runtime.switching import plugin_switch_session

        return await plugin_switch_session(self._session, session_path, with_session)

    async def reload(self) -> None:
        """What ``/reload`` does: ``session_shutdown`` (reason ``reload``), plugins, settings,
        keybindings and resources loaded again, ``session_start`` (reason ``reload``). Code after
        it runs in the old plugin module: return right after. Refused while a run streams."""
        from pi_host.runtime.switching import plugin_reload

        await plugin_reload(self._session)

    def shutdown(self) -> None:
        """Ask pi to exit gracefully once the session is idle (interactive: after the queued
        messages; RPC: after the command in flight). ``session_shutdown`` fires before the
        exit. A no-op in print and JSON mode, which exit once their prompts are done."""
        from pi_host.runtime.switching import plugin_shutdown

        plugin_shutdown(self._session)

    # --- providers, subscriptions, sub-sessions ---------------------------------------------------

    def register_provider(self, name: str, config: dict[str, Any]) -> list[str]:
        """Add a provider (or override one: ``{"baseUrl": ...}`` redirects a built-in's models)
        from a models.json provider object (``baseUrl``, ``api``, ``apiKey``, ``headers``,
        ``models``...), effective at once for ``set_model``, ``/model`` and RPC. Returns the
        ``provider/id`` keys of its models. A config the catalog cannot use raises ValueError."""
        from pi_host.runtime.extension_api.providers import register_provider

        return register_provider(self._session, name, config)

    def unregister_provider(self, name: str) -> bool:
        """Remove a provider registered with :meth:`register_provider` (the built-in models it
        overrode come back); False when there was none. Refused (ValueError) while the current
        model is one of its models: switch models first."""
        from pi_host.runtime.extension_api.providers import unregister_provider

        return unregister_provider(self._session, name)

    def on(self, event_name: str, handler: Callable[..., Any]) -> Callable[[], None]:
        """Handle ``event_name`` (any ``on_<event>`` hook name without ``on_``: ``agent_end``,
        ``tool_call``, ``session_before_switch``...) from now on, as a hook does: ``handler(event,
        ctx)`` (or ``handler(event)``) may be async, its return follows the event's rule, and a
        failure is reported under the subscribing plugin's name. Runs after the hooks of loaded
        plugins. Returns the function that unsubscribes."""
        from pi_host.runtime.extension_api.subscriptions import subscribe

        return subscribe(self._session.host, event_name, handler)

    async def create_subsession(self, **options: Any) -> Any:
        """A separate, started :class:`AgentSession` for a sub-agent, with this session's model,
        thinking level, catalog and keys, plugins, settings and cwd unless ``options`` say
        otherwise (``model``, ``thinking_level``, ``tools``, ``cwd``, ``system_prompt``,
        ``append_system_prompt``, ``plugins``: a fresh set of built-ins plus these instead of this
        session's plugins, ``store``, ``mode``). In memory; ``await sub.close()`` when done."""
        from pi_host.runtime.extension_api.subsession import create_subsession

        return await create_subsession(self, **options)

    async def spawn(
        self,
        prompt: str,
        *,
        tools: list[str] | None = None,
        model: Any = None,
        system: str | None = None,
        max_turns: int | None = None,
        budget: Any = None,
        **options: Any,
    ) -> Any:
        """Run ``prompt`` in a sub-agent: a child session with its own context and session file
        (linked to this one), its budget inside this session's, cancelled with this session's
        run; returns a :class:`pi_host.runtime.subagents.SubagentResult` (``text``,
        ``stop_reason``, ``usage``, ``session_file``...). ``budget``: ``{"cost": 0.5,
        "tokens": ..., "time": "5m"}``. Await several with ``asyncio.gather`` to run them at once."""
        from pi_host.runtime.subagents import spawn

        return await spawn(
            self,
            prompt,
            tools=tools,
            model=model,
            system=system,
            max_turns=max_turns,
            budget=budget,
            **options,
        )


async def _call(callback: Callable[..., Any], *args: Any) -> None:
    result = callback(*args)
    if inspect.isawaitable(result):
        await result


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


__all__ = ["EventBus", "ExtensionApi", "as_custom_message", "event_bus"]
