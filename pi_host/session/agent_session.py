"""The session layer: input pipeline, queues, plugin events and persistence around the loop.

:class:`AgentSession` turns a prompt into one or more runs of its :class:`pi_host.agent.Agent`
(the agent library's, over the kernel's loop), maps the loop's callbacks onto plugin events
(:mod:`pi_host.session.bridge`), persists every finished message to the store and ends each
prompt with ``agent_settled``. Listeners (:meth:`AgentSession.subscribe`) receive every session
event; modes render them. What the session drives but does not implement is handed to it: the
store, the model catalog and (optionally) the compaction driver.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from pi_host.agent.agent import Agent
from pi_host.agent.queues import QueuedMessage
from pi_host.agent.saving import MessageSaver
from pi_host.config import paths
from pi_host.loop import events
from pi_host.loop.convert import convert_to_llm
from pi_host.loop.tools import Tool, ToolContext
from pi_host.plugins.dispatch import PluginHost
from pi_host.plugins.registrations import Command, ContextSource
from pi_host.protocol import AssistantMessage, ImageContent, TextContent, UserMessage, now_ms
from pi_host.protocol.abort import AbortSignal
from pi_host.protocol.transcript import force_system_prompt, replay_system
from pi_host.session.bridge import PluginBridge
from pi_host.session.compaction_driver import CompactionDriver
from pi_host.session.config import SessionConfig
from pi_host.session.context import ExtensionContext
from pi_host.session.errors import SessionError
from pi_host.session.parts import registered_parts, select_tools
from pi_host.session.retry import AutoRetry
from pi_host.session.store import SessionStore, TreeSessionStore
from pi_host.session.system_prompt import SystemPromptDeclarer
from pi_host.session.ui import UI, HeadlessUI

Listener = Callable[[dict[str, Any]], Any]

STREAMING_ERROR = (
    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
)


class AgentSession:
    """One conversation: built with everything it needs (the runtime's session factory hands in
    the ``ctx`` class, the compaction driver, the mode's UI and its session control), then
    :meth:`start`-ed; nothing is attached to it from outside afterwards."""

    def __init__(
        self,
        host: PluginHost,
        registry: Any,
        store: SessionStore,
        config: SessionConfig,
        *,
        context: Callable[[AgentSession], ExtensionContext] = ExtensionContext,
        compactor: Callable[[AgentSession], CompactionDriver | None] | None = None,
        ui: UI | None = None,
        control: Any = None,
    ) -> None:
        self.host = host
        self.registry = registry
        self.store = store
        self.config = config
        self._listeners: list[Listener] = []
        self.bridge = PluginBridge(self)
        self.system_prompt = SystemPromptDeclarer(self)
        # one loop: runs, state and queues are the agent's; plugins, retry and compaction hook in
        self.agent = Agent(
            config.model,
            thinking_level=config.thinking_level,
            stream_fn=lambda model, context, options: registry.stream_fn(model)(model, context, options),
            stream_options=self.bridge.stream_options,
            convert_to_llm=self._to_llm,
            transform_context=self.bridge.transform_context,
            get_api_key=self.bridge.api_key,
            before_tool_call=self.bridge.before_tool_call,
            after_tool_call=self.bridge.after_tool_call,
            finish_turn=self._finish_turn,
            declare_tool_changes=self.system_prompt.declare_changes,
            after_run=self._after_run,
            before_idle=self._before_idle,
            on_queue_change=lambda steering, follow_up: self.notify(events.queue_update(steering, follow_up)),
        )
        self.agent.subscribe(self._emit)
        self.ctx = context(self)
        self.ui: UI = ui if ui is not None else HeadlessUI()
        """The mode's user interface (plugins reach it as ``ctx.ui``); headless by default."""
        self.control = control
        """How plugins replace this session (a :class:`pi_host.runtime.switching.SessionControl`)."""
        self._saver = MessageSaver(lambda: self.store, self.warn)
        self.tool_context = ToolContext(
            cwd=config.cwd,
            settings=config.settings,
            session_id=store.session_id,
            session_file=getattr(store, "session_file", None),
            provider=getattr(self.model, "provider", None),
            model=getattr(self.model, "id", None),
            thinking_level=self.thinking_level,
            agent_dir=paths.agent_dir(),
            provider_key_variables=tuple(
                sorted(
                    {name for info in getattr(registry, "providers", {}).values() for name in info.env_keys}
                )
            ),
        )
        parts = registered_parts(host, self.tool_context)
        self._owners = parts.owners
        self.all_tools: dict[str, Tool] = parts.tools
        self.builtin_tools: set[str] = parts.builtin_tools
        """Names of tools a built-in plugin registered (``--no-builtin-tools`` drops them)."""
        self.commands: dict[str, Command] = parts.commands
        self.context_sources: list[ContextSource] = parts.context_sources
        self.active_tools = select_tools(parts, config, self.warn)
        restored = store.build_context()
        self.agent.state.messages = restored.messages
        self.agent.tool_context = self.tool_context
        self.discovered: dict[str, list[str]] = {}
        """What ``resources_discover`` handlers returned (``skillPaths``, ``promptPaths``...)."""
        self._deferred: list[Any] = []
        self.next_turn: list[Any] = []  # custom messages sent along with the next prompt
        self.auto_retry_enabled = True
        self.queues = self.agent.queues
        self._settling = False
        self._settle_run = False
        self._last_entry: tuple[Any, str | None] | None = None
        self._turn_index = -1
        self._last_response: AssistantMessage | None = None
        self._forced_prompt: str | None = None
        self._prompt_event: dict[str, Any] | None = None
        self._retry = AutoRetry(self)
        self.entry_ids: dict[int, str] = {}
        """``id(message)`` -> its session entry's id, for the messages of the current run."""
        if not restored.messages:  # a new session (possibly named already): record model and level
            self._record_initial_state()
        self.compactor: CompactionDriver | None = compactor(self) if compactor is not None else None

    # --- public API ---------------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        return self.store.session_id

    @property
    def messages(self) -> list[Any]:
        return self.agent.state.messages  # the agent's list: change it in place

    @property
    def model(self) -> Any:
        return self.agent.state.model

    @model.setter
    def model(self, value: Any) -> None:
        self.agent.state.model = value

    @property
    def thinking_level(self) -> str:
        return self.agent.state.thinking_level

    @thinking_level.setter
    def thinking_level(self, value: str) -> None:
        self.agent.state.thinking_level = value

    @property
    def active_tools(self) -> dict[str, Tool]:
        """The tools the model may call, by name (the agent's dict: change it in place, or assign)."""
        return self.agent.state.tools

    @active_tools.setter
    def active_tools(self, value: dict[str, Tool]) -> None:
        self.agent.state.tools = value

    @property
    def is_streaming(self) -> bool:
        return self.agent.is_streaming

    @property
    def signal(self) -> AbortSignal | None:
        """The running prompt's abort signal (None while idle)."""
        return self.agent.signal

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every session event (dicts shaped like pi's events)."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    async def start(self, reason: str = "startup", previous_session_file: str | None = None) -> None:
        """``session_start``, then the one ``resources_discover`` of this session."""
        previous = {"previousSessionFile": previous_session_file} if previous_session_file else {}
        await self.host.dispatch("session_start", {"reason": reason, **previous}, self.ctx)
        found = await self.host.dispatch(
            "resources_discover",
            {"cwd": self.config.cwd, "reason": "reload" if reason == "reload" else "startup"},
            self.ctx,
        )
        self.discovered = dict(found or {})

    async def prompt(
        self,
        text: str,
        images: list[ImageContent] | None = None,
        streaming_behavior: str | None = None,
        source: str = "sdk",
        wait: bool = True,
        expand: bool = True,
    ) -> str:
        """Submit input; returns the disposition ``started``, ``queued`` or ``handled``.

        With ``wait`` (default) a started prompt returns once settled; ``expand=False``: as typed.
        """
        if expand and text.startswith("/") and await self._run_command(text):
            return "handled"
        expanded = await self._preprocess(text, images, source, streaming_behavior, expand)
        if expanded is None:
            return "handled"
        text, images = expanded
        if self.is_streaming:
            if streaming_behavior in ("steer", "followUp"):
                queue = self.queues.steering if streaming_behavior == "steer" else self.queues.follow_up
                self.queues.add(queue, self._user_message(text, images), text)
                return "queued"
            raise SessionError(STREAMING_ERROR)
        self._check_model()
        if self.compactor is not None:
            await self.compactor.before_prompt()
        prompts = await self._before_agent_start(text, images, self._user_message(text, images))
        self._start_run(prompts)
        if wait:
            await self.wait_for_idle()
        return "started"

    def run_messages(self, messages: list[Any]) -> None:
        """Start a run with ``messages`` as they are (no input pipeline: a plugin's custom
        message that triggers a turn); the session must be idle."""
        self._check_model()
        self._start_run(messages)

    async def steer(self, text: str, images: list[ImageContent] | None = None) -> str:
        return await self._queue_input(self.queues.steering, text, images)

    async def follow_up(self, text: str, images: list[ImageContent] | None = None) -> str:
        return await self._queue_input(self.queues.follow_up, text, images)

    def clear_queue(self) -> dict[str, list[str]]:
        return self.queues.clear()

    def has_pending_messages(self) -> bool:
        return bool(self.queues)

    def request_abort(self) -> None:
        """Abort the running prompt and any running compaction; returns at once."""
        self.agent.abort("Operation aborted")
        if self.compactor is not None:
            self.compactor.abort()

    async def abort(self) -> None:
        """Abort the current run and wait until the session is idle."""
        self.request_abort()
        await self.wait_for_idle()

    async def wait_for_idle(self) -> None:
        await self.agent.wait_for_idle()

    def last_assistant(self) -> AssistantMessage | None:
        """The last assistant message produced (what print mode prints), even one compacted away."""
        if self._last_response is not None:
            return self._last_response
        return next((m for m in reversed(self.messages) if getattr(m, "role", None) == "assistant"), None)

    def system_prompt_text(self) -> str:
        """The system prompt as the model sees it now (a ``before_agent_start`` replacement
        included; while those handlers run, as chained so far)."""
        if self._prompt_event is not None:
            return self._prompt_event["systemPrompt"]
        return self._forced_prompt or replay_system(self.messages).render()

    async def set_model(self, model: Any, source: str = "set") -> None:
        previous = self.model
        self.model = model
        self.tool_context.provider, self.tool_context.model = model.provider, model.id
        self.store.append({"type": "model_change", "provider": model.provider, "modelId": model.id})
        if previous is None or (previous.provider, previous.id) != (model.provider, model.id):
            await self.host.dispatch(  # pi announces a change only
                "model_select", {"model": model, "previousModel": previous, "source": source}, self.ctx
            )

    async def set_thinking_level(self, level: str) -> None:
        previous = self.thinking_level
        self.thinking_level = level
        self.tool_context.thinking_level = level
        self.store.append({"type": "thinking_level_change", "thinkingLevel": level})
        self.notify({"type": "thinking_level_changed", "level": level})  # pi's session event
        await self.host.dispatch(
            "thinking_level_select", {"level": level, "previousLevel": previous}, self.ctx
        )

    async def set_session_name(self, name: str) -> str | None:
        """Name the session (an empty name clears it); emits ``session_info_changed``."""
        store = self.store
        entry = (
            store.set_name(name)
            if isinstance(store, TreeSessionStore)
            else store.append({"type": "session_info", "name": name})
        )
        stored = (entry or {}).get("name") or None
        await self._emit(events.session_info_changed(stored))
        return stored

    async def add_message(self, message: Any) -> None:
        """Add a message of the session's own (a ``!command``'s ``bashExecution``, a plugin's
        custom message): stored, in the context, shown; while a run streams, once it settles."""
        if self.is_streaming and not self._settling:
            self._deferred.append(message)
            return
        await self._emit(events.message_start(message))
        self.messages.append(message)
        await self._emit(events.message_end(message))

    async def reload(self, settings: dict[str, Any] | None = None) -> None:
        """Re-discover (context files, skills, templates), taking new ``settings`` when given."""
        if settings is not None:
            self.config.settings = settings
            self.tool_context.settings = settings
        self.system_prompt.refresh_pending = True
        await self.start("reload")

    async def build_sections(self) -> dict[str, str | None]:
        """The system-prompt sections the context sources produce now."""
        return await self.system_prompt.build_sections()

    async def compact(self, custom_instructions: str | None = None, *, raise_on_cancel: bool = True) -> Any:
        """Manual compaction (``/compact``): aborts the current run first (reference §7.7)."""
        if self.compactor is None:
            raise SessionError("No compaction support is installed")
        if self.is_streaming:
            await self.abort()
        return await self.compactor.compact(custom_instructions, raise_on_cancel=raise_on_cancel)

    async def navigate_tree(self, target_id: str, **options: Any) -> dict[str, Any]:
        """Continue from another entry of the session tree (``/tree``, reference §7.9)."""
        if self.compactor is None:
            raise SessionError("No tree navigation support is installed")
        return await self.compactor.navigate_tree(target_id, **options)

    async def emit_event(self, event: dict[str, Any]) -> None:
        """Emit a session event (plugins, listeners, JSON mode) from machinery around the session."""
        await self._emit(event)

    def warn(self, line: str) -> None:
        """A one-line warning that is nobody's failure (a setting the machinery cannot use)."""
        if self.config.warn is not None:
            self.config.warn(line)
        else:
            import sys

            sys.stderr.write(f"pi: {line}\n")

    def report(self, item: Any, where: str, error: BaseException | str) -> None:
        """Name a failure of something a plugin registered (a command, a context source)."""
        self.host.report(self._owners.get(id(item), getattr(item, "name", "?")), where, error)

    async def close(self, reason: str = "quit") -> None:
        if self.is_streaming:
            await self.abort()
        await self.host.dispatch("session_shutdown", {"reason": reason}, self.ctx)
        self.store.close()

    # --- input pipeline -------------------------------------------------------------------------

    async def _run_command(self, text: str) -> bool:
        name, _, args = text[1:].partition(" ")
        command = self.commands.get(name)
        if command is None:
            return False
        try:
            result = command.handler(args.strip(), self.ctx)
            if inspect.isawaitable(result):
                await result
        except Exception as exc:
            self.report(command, "command", f"/{name}: {type(exc).__name__}: {exc}")
        return True

    async def _preprocess(
        self, text: str, images: Any, source: str, behavior: str | None, expand: bool = True
    ) -> tuple[str, list[ImageContent] | None] | None:
        event: dict[str, Any] = {"text": text, "images": images, "source": source}
        if behavior:
            event["streamingBehavior"] = behavior
        decision = await self.host.dispatch("input", event, self.ctx)
        if decision is not None and decision["action"] == "handled":
            return None
        text, images = event["text"], event["images"]
        for source_plugin in self.context_sources if expand else ():
            if source_plugin.expand_input is None:
                continue
            try:
                expanded = source_plugin.expand_input(text, self.ctx)
                if inspect.isawaitable(expanded):
                    expanded = await expanded
            except Exception as exc:
                self.report(source_plugin, "expand_input", exc)
                continue
            if isinstance(expanded, str):
                text = expanded
        return text, images

    async def _queue_input(self, queue: list[QueuedMessage], text: str, images: Any) -> str:
        if text.startswith("/") and text[1:].partition(" ")[0] in self.commands:
            raise SessionError("Extension commands cannot be queued")
        expanded = await self._preprocess(text, images, "sdk", None)
        if expanded is None:
            return "handled"
        text, images = expanded
        message = self._user_message(text, images)
        if not self.is_streaming:
            self._check_model()
            self._start_run(await self._before_agent_start(text, images, message))
            return "started"
        self.queues.add(queue, message, text)
        return "queued"

    def _user_message(self, text: str, images: list[ImageContent] | None) -> UserMessage:
        return UserMessage(content=[TextContent(text=text), *(images or ())])

    def _check_model(self) -> None:
        if self.model is None:
            raise SessionError("No model selected. Use --model provider/id (see pi --list-models).")
        provider = self.model.provider
        if (
            not self.config.api_key
            and self.registry.needs_key(provider)
            and not self.registry.get_api_key(provider)
        ):
            raise SessionError(f"No API key for provider {provider}: {self.registry.key_hint(provider)}")

    async def _before_agent_start(self, text: str, images: Any, message: UserMessage) -> list[Any]:
        self._forced_prompt = None
        later, self.next_turn = self.next_turn, []
        if not self.host.has("on_before_agent_start"):
            return [message, *later]
        prompt = replay_system(self.messages).render()
        if not prompt:  # nothing declared yet: the prompt the first request will declare
            prompt = "\n\n".join(v for v in (await self.build_sections()).values() if v)
        event = {
            "messageType": "user",
            "prompt": text,
            "images": images,
            "message": message,
            "systemPrompt": prompt,
            "systemPromptOptions": {},
        }
        self._prompt_event = event
        try:
            extra = await self.host.dispatch("before_agent_start", event, self.ctx)
        finally:
            self._prompt_event = None
        if event["systemPrompt"] != prompt:
            self._forced_prompt = event["systemPrompt"]
        return [message, *later, *(extra or ())]

    # --- runs -----------------------------------------------------------------------------------

    def _start_run(self, prompts: list[Any]) -> None:
        self.system_prompt.refresh_pending = True
        self.entry_ids = {}
        self._settling = self._settle_run = False
        agent, config = self.agent, self.config
        # read at every prompt: settings, RPC and the compactor may change them between prompts
        agent.tool_execution = config.tool_execution
        agent.steering_mode, agent.follow_up_mode = config.steering_mode, config.follow_up_mode
        agent.prepare_next_turn = self.compactor.between_turns if self.compactor is not None else None
        agent.start(prompts)

    async def _after_run(self, new_messages: list[Any], signal: AbortSignal) -> list[Any] | None:
        """After each run of the agent: retry a failed answer, recover from an overflow, then the
        ``agent_before_settle`` boundary; ``[]`` re-sends the context, None settles."""
        if self._settle_run:  # the one extra run a before_settle handler asked for
            return None
        final = _last_assistant(new_messages)
        if self._retry.pending:
            if await self._retry.prepare(final, signal):
                return []  # continue(): re-send the context without the failed answer
        else:
            await self._retry.finish(final)
            if self.compactor is not None and await self.compactor.after_run(new_messages, signal):
                return []  # overflow recovery compacted the context: retry the prompt
        if not signal.aborted and self.host.has("on_agent_before_settle"):
            from pi_host.session import boundaries  # only with agent_before_settle handlers

            if (
                await boundaries.before_settle(self, final)
                and self.messages
                and (getattr(self.messages[-1], "role", None) != "assistant")
            ):
                self._settle_run = True
                return []
        return None

    async def _before_idle(self, aborted: bool) -> None:
        self._settling = True  # add_message below must not defer again
        deferred, self._deferred = self._deferred, []
        for message in deferred:
            await self.add_message(message)
        await self._emit(events.agent_settled(aborted))

    def _to_llm(self, messages: list[Any]) -> list[Any]:
        block_images = bool((self.config.settings.get("images") or {}).get("blockImages"))
        converted = convert_to_llm(messages, block_images)
        return (
            converted if self._forced_prompt is None else force_system_prompt(converted, self._forced_prompt)
        )

    # --- events ---------------------------------------------------------------------------------

    async def _emit(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "message_end":
            await self._message_end(event)
        elif kind == "turn_start":
            self._turn_index += 1
            await self.host.dispatch(
                kind, {**event, "turnIndex": self._turn_index, "timestamp": now_ms()}, self.ctx
            )
        elif kind != "turn_end":  # turn_end handlers already ran as the turn boundary
            if kind == "agent_end":
                event["willRetry"] = self._will_retry(event.get("messages") or [])
            await self.host.dispatch(kind, event, self.ctx)
        self.notify(event)
        if self.host.has("on_event"):
            await self.host.dispatch("event", event, self.ctx)
        if kind == "message_end":
            await self._retry.message_end(event["message"])

    def notify(self, event: dict[str, Any]) -> None:
        """Give ``event`` to the session's listeners only (not to plugins' hooks)."""
        for listener in self._listeners:
            try:
                listener(event)
            except Exception as exc:  # named once per failure (stderr when nothing else shows it)
                name = getattr(listener, "__qualname__", None) or type(listener).__qualname__
                module = getattr(listener, "__module__", None)
                self.host.report(
                    f"listener {module}.{name}" if module else f"listener {name}", event["type"], exc
                )

    async def _message_end(self, event: dict[str, Any]) -> None:
        message = event["message"]
        if self.host.has("on_message_end"):
            hook_event = dict(event)
            await self.host.dispatch("message_end", hook_event, self.ctx)
            if hook_event["message"] is not message:
                for index in range(len(self.messages) - 1, -1, -1):
                    if self.messages[index] is message:
                        self.messages[index] = hook_event["message"]
                        break
                message = event["message"] = hook_event["message"]
        if getattr(message, "role", None) == "assistant":
            self._last_response = message
        entry_id = self._saver.save(message)
        self._last_entry = (message, entry_id)
        if entry_id is not None:
            self.entry_ids[id(message)] = entry_id

    async def _finish_turn(self, turn: dict[str, Any]) -> Any:
        """The ``turn_end`` boundary: handlers may propose entries and ask for one more request."""
        if not self.host.has("on_turn_end"):
            return None
        from pi_host.session import boundaries  # only with turn_end handlers

        return await boundaries.turn_end(self, self._turn_index, turn)

    def _will_retry(self, new_messages: list[Any]) -> bool:
        if self.agent.signal is not None and self.agent.signal.aborted:
            return False
        final = _last_assistant(new_messages)
        if self._retry.decide(final):
            return True
        return bool(self.compactor is not None and self.compactor.will_retry(final))

    def _record_initial_state(self) -> None:
        if self.model is not None:
            model = self.model
            self.store.append({"type": "model_change", "provider": model.provider, "modelId": model.id})
        self.store.append({"type": "thinking_level_change", "thinkingLevel": self.thinking_level})


def _last_assistant(messages: list[Any]) -> Any:
    return next((m for m in reversed(messages) if getattr(m, "role", None) == "assistant"), None)
