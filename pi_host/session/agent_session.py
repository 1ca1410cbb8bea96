"""The session layer: input pipeline, queues, plugins, persistence around the loop (reference §4).

:class:`AgentSession` turns a prompt into one or more runs of :class:`pi_host.loop.loop.AgentLoop`,
maps the loop's callbacks onto plugin events (``context``, ``tool_call``, ``tool_result``...),
persists every finished message to the session store and ends each prompt with
``agent_settled``. Listeners (``subscribe``) receive every session event; modes render them.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pi_host.config import paths
from pi_host.loop.convert import convert_to_llm
from pi_host.loop.loop import AgentLoop, LoopConfig
from pi_host.loop.tools import Tool, ToolContext
from pi_host.plugins.dispatch import PluginHost, is_stop
from pi_host.plugins.registrations import Command, ContextSource
from pi_host.protocol import (
    AssistantMessage,
    CustomMessage,
    ImageContent,
    TextContent,
    UserMessage,
    now_ms,
)
from pi_host.protocol.abort import AbortController, AbortSignal
from pi_host.protocol.transcript import replay_system
from pi_host.session.bridge import PluginBridge
from pi_host.session.context import ExtensionContext
from pi_host.session.errors import SessionError
from pi_host.session.retry import AutoRetry
from pi_host.session.system_prompt import SystemPromptDeclarer

Listener = Callable[[dict[str, Any]], Any]

STREAMING_ERROR = (
    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
)
DEFAULT_TOOLS = ("read", "bash", "edit", "write")
PI_TOOL_ORDER = ("read", "bash", "edit", "write", "grep", "find", "ls")


@dataclass
class QueuedMessage:
    message: Any
    text: str


@dataclass
class SessionConfig:
    cwd: str
    model: Any = None
    thinking_level: str = "off"
    tools: list[str] | None = None
    """Allowlist of tool names; None = each tool's default activity (settings ``defaultTools``)."""
    no_tools: bool = False
    tool_execution: str = "parallel"
    steering_mode: str = "one-at-a-time"
    follow_up_mode: str = "one-at-a-time"
    mode: str = "sdk"
    settings: dict[str, Any] = field(default_factory=dict)
    flags: dict[str, Any] = field(default_factory=dict)
    api_key: str | None = None


class AgentSession:
    def __init__(
        self,
        host: PluginHost,
        registry: Any,
        store: Any,
        config: SessionConfig,
    ) -> None:
        self.host = host
        self.registry = registry
        self.store = store
        self.config = config
        self.model = config.model
        self.thinking_level = config.thinking_level
        self.ctx = ExtensionContext(self)
        self.tool_context = ToolContext(
            cwd=config.cwd,
            settings=config.settings,
            session_id=store.session_id,
            session_file=getattr(store, "session_file", None),
            provider=getattr(self.model, "provider", None),
            model=getattr(self.model, "id", None),
            thinking_level=self.thinking_level,
            agent_dir=paths.agent_dir(),
        )
        self.all_tools: dict[str, Tool] = {}
        for tool in host.collect("register_tools", ctx=self.tool_context):
            if isinstance(tool, Tool) or hasattr(tool, "execute"):
                self.all_tools[tool.name] = tool
        self.active_tools: dict[str, Tool] = self._select_tools()
        self.commands: dict[str, Command] = {}
        for command in host.collect("register_commands"):
            if isinstance(command, Command):
                name, index = command.name, 1
                while name in self.commands:
                    name, index = f"{command.name}:{index}", index + 1
                self.commands[name] = command
        self.context_sources: list[ContextSource] = sorted(
            (s for s in host.collect("register_context_sources") if isinstance(s, ContextSource)),
            key=lambda s: s.order,
        )
        restored = store.build_context()
        self.messages: list[Any] = list(restored.messages)
        self._listeners: list[Listener] = []
        self._steering: list[QueuedMessage] = []
        self._follow_up: list[QueuedMessage] = []
        self._controller: AbortController | None = None
        self._run_task: asyncio.Task[Any] | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self.bridge = PluginBridge(self)
        self.system_prompt = SystemPromptDeclarer(self)
        self._last_entry: tuple[Any, str | None] | None = None
        self._turn_index = -1
        self._last_response: AssistantMessage | None = None
        self.auto_retry_enabled = True
        self._retry = AutoRetry(self)
        self.compactor: Any = None
        try:
            from pi_host.lib.compaction import Compactor
        except ImportError:
            pass
        else:
            self.compactor = Compactor(self)
        if not restored.messages:  # a new session (possibly named already): record model and level
            self._record_initial_state()

    # --- public API ---------------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        return self.store.session_id

    @property
    def is_streaming(self) -> bool:
        return self._run_task is not None and not self._run_task.done()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every session event (dicts shaped like pi's events)."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    async def prompt(
        self,
        text: str,
        images: list[ImageContent] | None = None,
        streaming_behavior: str | None = None,
        source: str = "sdk",
        wait: bool = True,
    ) -> str:
        """Submit input; returns the disposition ``started``, ``queued`` or ``handled``.

        With ``wait`` (default) a started prompt returns once the session has settled.
        """
        if text.startswith("/"):
            handled = await self._run_command(text)
            if handled:
                return "handled"
        expanded = await self._preprocess(text, images, source, streaming_behavior)
        if expanded is None:
            return "handled"
        text, images = expanded
        if self.is_streaming:
            if streaming_behavior == "steer":
                self._enqueue(self._steering, self._user_message(text, images), text)
                return "queued"
            if streaming_behavior == "followUp":
                self._enqueue(self._follow_up, self._user_message(text, images), text)
                return "queued"
            raise SessionError(STREAMING_ERROR)
        self._check_model()
        if self.compactor is not None:
            await self.compactor.before_prompt()
        message = self._user_message(text, images)
        prompts = await self._before_agent_start(text, images, message)
        self._start_run(prompts)
        if wait:
            await self.wait_for_idle()
        return "started"

    async def steer(self, text: str, images: list[ImageContent] | None = None) -> str:
        return await self._queue_input(self._steering, text, images)

    async def follow_up(self, text: str, images: list[ImageContent] | None = None) -> str:
        return await self._queue_input(self._follow_up, text, images)

    def clear_queue(self) -> dict[str, list[str]]:
        cleared = {
            "steering": [q.text for q in self._steering],
            "followUp": [q.text for q in self._follow_up],
        }
        self._steering.clear()
        self._follow_up.clear()
        self._queue_changed()
        return cleared

    def request_abort(self) -> None:
        """Abort the running prompt and any running compaction; returns at once."""
        if self._controller is not None:
            self._controller.abort("Operation aborted")
        if self.compactor is not None:
            self.compactor.abort()

    async def abort(self) -> None:
        """Abort the current run and wait until the session is idle."""
        self.request_abort()
        await self.wait_for_idle()

    async def wait_for_idle(self) -> None:
        await self._idle.wait()
        if self._run_task is not None and self._run_task.done() and not self._run_task.cancelled():
            error = self._run_task.exception()
            if error is not None:
                self._run_task = None
                raise error

    def last_assistant(self) -> AssistantMessage | None:
        """The last assistant message this session produced (what print mode prints), even when
        compaction or a context edit has since taken it out of the model's context."""
        if self._last_response is not None:
            return self._last_response
        for message in reversed(self.messages):
            if getattr(message, "role", None) == "assistant":
                return message
        return None

    async def set_model(self, model: Any, source: str = "set") -> None:
        previous = self.model
        self.model = model
        self.tool_context.provider, self.tool_context.model = model.provider, model.id
        self.store.append({"type": "model_change", "provider": model.provider, "modelId": model.id})
        await self.host.dispatch(
            "model_select", {"model": model, "previousModel": previous, "source": source}, self.ctx
        )

    async def set_thinking_level(self, level: str) -> None:
        previous = self.thinking_level
        self.thinking_level = level
        self.tool_context.thinking_level = level
        self.store.append({"type": "thinking_level_change", "thinkingLevel": level})
        await self.host.dispatch(
            "thinking_level_select", {"level": level, "previousLevel": previous}, self.ctx
        )

    async def build_sections(self) -> dict[str, str | None]:
        """The system-prompt sections the context sources produce now."""
        return await self.system_prompt.build_sections()

    async def compact(self, custom_instructions: str | None = None) -> Any:
        """Manual compaction (``/compact``): aborts the current run first (reference §7.7)."""
        if self.compactor is None:
            raise SessionError("No compaction support is installed")
        if self.is_streaming:
            await self.abort()
        return await self.compactor.compact(custom_instructions)

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
            self.host.report(name, "command", exc)
        return True

    async def _preprocess(
        self, text: str, images: list[ImageContent] | None, source: str, streaming_behavior: str | None
    ) -> tuple[str, list[ImageContent] | None] | None:
        event: dict[str, Any] = {"text": text, "images": images, "source": source}
        if streaming_behavior:
            event["streamingBehavior"] = streaming_behavior

        def fold(ev: dict[str, Any], result: Any) -> None:
            if isinstance(result, dict) and result.get("action") == "transform":
                ev["text"] = result.get("text", ev["text"])
                if "images" in result:
                    ev["images"] = result["images"]

        result = await self.host.dispatch("input", event, self.ctx, fold=fold)
        if result is not None and is_stop(result):
            return None
        text, images = event["text"], event["images"]
        for source_plugin in self.context_sources:
            if source_plugin.expand_input is None:
                continue
            try:
                expanded = source_plugin.expand_input(text, self.ctx)
                if inspect.isawaitable(expanded):
                    expanded = await expanded
            except Exception as exc:
                self.host.report(source_plugin.name, "expand_input", exc)
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
        self._enqueue(queue, message, text)
        return "queued"

    def _user_message(self, text: str, images: list[ImageContent] | None) -> UserMessage:
        content: list[Any] = [TextContent(text=text)]
        content.extend(images or ())
        return UserMessage(content=content)

    def _check_model(self) -> None:
        if self.model is None:
            raise SessionError("No model selected. Use --model provider/id (see pi --list-models).")
        if self.config.api_key:
            return
        if self.registry.needs_key(self.model.provider) and not self.registry.get_api_key(
            self.model.provider
        ):
            raise SessionError(
                f"No API key for provider {self.model.provider}: {self.registry.key_hint(self.model.provider)}"
            )

    async def _before_agent_start(self, text: str, images: Any, message: UserMessage) -> list[Any]:
        event = {
            "messageType": "user",
            "prompt": text,
            "images": images,
            "message": message,
            "systemPrompt": replay_system(self.messages).render(),
            "systemPromptOptions": {},
        }
        extra: list[Any] = []

        def fold(ev: dict[str, Any], result: Any) -> None:
            if isinstance(result, dict):
                if result.get("message") is not None:
                    extra.append(result["message"])
                if result.get("systemPrompt") is not None:
                    ev["systemPrompt"] = result["systemPrompt"]

        await self.host.dispatch("before_agent_start", event, self.ctx, fold=fold)
        return [message, *extra]

    def _enqueue(self, queue: list[QueuedMessage], message: Any, text: str) -> None:
        queue.append(QueuedMessage(message, text))
        self._queue_changed()

    def _queue_changed(self) -> None:
        self._emit_now(
            {
                "type": "queue_update",
                "steering": [q.text for q in self._steering],
                "followUp": [q.text for q in self._follow_up],
            }
        )

    def _dequeue(self, queue: list[QueuedMessage], mode: str) -> list[Any]:
        if not queue:
            return []
        taken = queue[:] if mode == "all" else queue[:1]
        del queue[: len(taken)]
        self._queue_changed()
        return [q.message for q in taken]

    # --- runs -----------------------------------------------------------------------------------

    def _start_run(self, prompts: list[Any]) -> None:
        self.system_prompt.refresh_pending = True
        self._controller = AbortController()
        self._idle.clear()
        self._run_task = asyncio.ensure_future(self._run(prompts, self._controller))

    async def _run(self, prompts: list[Any], controller: AbortController) -> None:
        try:
            next_prompts = prompts
            while True:
                loop = AgentLoop(self._loop_config(controller.signal), self.messages, self._emit)
                new_messages = await loop.run(next_prompts)
                if controller.signal.aborted:
                    break
                final = _last_assistant(new_messages)
                if self._retry.pending:
                    entry_id = (
                        self._last_entry[1] if self._last_entry and self._last_entry[0] is final else None
                    )
                    if await self._retry.prepare(final, entry_id, controller.signal):
                        next_prompts = []  # continue(): re-send the context without the failed answer
                        continue
                    break
                await self._retry.finish(final)
                if self.compactor is not None and await self.compactor.after_run(
                    new_messages, controller.signal
                ):
                    next_prompts = []  # overflow recovery compacted the context: retry the prompt
                    continue
                break
            aborted = controller.signal.aborted
            if not aborted and self.host.has("on_agent_before_settle"):
                event = {
                    "outcome": "completed",
                    "entries": [],
                    "continue": False,
                    "context": list(self.messages),
                }
                await self.host.dispatch("agent_before_settle", event, self.ctx, fold=_fold_boundary)
                self.append_boundary_entries(event["entries"], "agent_before_settle")
                if (
                    event["continue"]
                    and self.messages
                    and getattr(self.messages[-1], "role", None) != "assistant"
                ):
                    await AgentLoop(self._loop_config(controller.signal), self.messages, self._emit).run([])
                aborted = controller.signal.aborted
            await self._emit({"type": "agent_settled", "aborted": aborted})
        finally:
            self._controller = None
            self._idle.set()

    def _loop_config(self, signal: AbortSignal) -> LoopConfig:
        settings = self.config.settings
        block_images = bool((settings.get("images") or {}).get("blockImages"))
        return LoopConfig(
            model=self.model,
            stream_fn=self.registry.stream_fn,
            tools=dict(self.active_tools),
            thinking_level=self.thinking_level,
            tool_execution=self.config.tool_execution,
            signal=signal,
            tool_context=self.tool_context,
            stream_options=self.bridge.stream_options,
            convert_to_llm=lambda messages: convert_to_llm(messages, block_images),
            transform_context=self.bridge.transform_context,
            get_api_key=self.bridge.api_key,
            declare_tool_changes=self.system_prompt.declare_changes,
            before_tool_call=self.bridge.before_tool_call,
            after_tool_call=self.bridge.after_tool_call,
            prepare_next_turn=self.compactor.between_turns if self.compactor is not None else None,
            finish_turn=self._finish_turn,
            get_steering_messages=lambda: self._dequeue(self._steering, self.config.steering_mode),
            get_follow_up_messages=lambda: self._dequeue(self._follow_up, self.config.follow_up_mode),
        )

    # --- events ---------------------------------------------------------------------------------

    async def _emit(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "message_end":
            await self._message_end(event)
        else:
            if kind == "agent_end":
                event["willRetry"] = self._will_retry(event.get("messages") or [])
            if kind == "turn_start":
                self._turn_index += 1
                await self.host.dispatch(
                    kind, {**event, "turnIndex": self._turn_index, "timestamp": now_ms()}, self.ctx
                )
            elif kind != "turn_end":  # turn_end handlers already ran as the turn boundary
                await self.host.dispatch(kind, event, self.ctx)
        self._notify(event)
        if self.host.has("on_event"):
            await self.host.dispatch("event", event, self.ctx)

    def _emit_now(self, event: dict[str, Any]) -> None:
        self._notify(event)

    def _notify(self, event: dict[str, Any]) -> None:
        for listener in self._listeners:
            try:
                listener(event)
            except Exception as exc:
                self.host.report("listener", event["type"], exc)

    async def _message_end(self, event: dict[str, Any]) -> None:
        message = event["message"]
        if self.host.has("on_message_end"):
            role = getattr(message, "role", None)

            def fold(ev: dict[str, Any], result: Any) -> None:
                if isinstance(result, dict) and getattr(result.get("message"), "role", None) == role:
                    ev["message"] = result["message"]

            hook_event = dict(event)
            await self.host.dispatch("message_end", hook_event, self.ctx, fold=fold)
            if hook_event["message"] is not message:
                for index in range(len(self.messages) - 1, -1, -1):
                    if self.messages[index] is message:
                        self.messages[index] = hook_event["message"]
                        break
                message = event["message"] = hook_event["message"]
        if getattr(message, "role", None) == "assistant":
            self._last_response = message
        stored = self.store.append({"type": "message", "message": message.to_json()})
        self._last_entry = (message, stored.get("id") if isinstance(stored, dict) else None)

    async def _finish_turn(self, turn: dict[str, Any]) -> Any:
        """The ``turn_end`` boundary: handlers may propose entries and ask for one more request."""
        if not self.host.has("on_turn_end"):
            return None
        event = {
            "turnIndex": self._turn_index,
            "message": turn["message"],
            "toolResults": turn["toolResults"],
            "entries": [],
            "continue": False,
        }
        await self.host.dispatch("turn_end", event, self.ctx, fold=_fold_boundary)
        self.append_boundary_entries(event["entries"], "turn_end")
        return {"action": "continue"} if event["continue"] else None

    def append_boundary_entries(self, entries: list[Any], source: str) -> None:
        """Validate and append entries proposed at a boundary (custom, custom_message, context_edit,
        compaction); a custom message also joins the live context."""
        allowed = {"custom", "custom_message", "context_edit", "compaction"}
        for entry in entries or ():
            if not isinstance(entry, dict) or entry.get("type") not in allowed:
                self.host.report(
                    source,
                    source,
                    f"rejected boundary entry {entry!r}: type must be one of {sorted(allowed)}",
                )
                continue
            self.store.append(dict(entry))
            if entry["type"] == "custom_message":
                self.messages.append(
                    CustomMessage(
                        custom_type=entry.get("customType", "custom"),
                        content=entry.get("content", ""),
                        display=entry.get("display", True),
                        details=entry.get("details"),
                    )
                )

    def _will_retry(self, new_messages: list[Any]) -> bool:
        if self._controller is not None and self._controller.signal.aborted:
            return False
        final = _last_assistant(new_messages)
        if self._retry.decide(final):
            return True
        return bool(self.compactor is not None and self.compactor.will_retry(final))

    async def emit_event(self, event: dict[str, Any]) -> None:
        """Emit a session event (plugins, listeners, JSON mode) from session-level machinery."""
        await self._emit(event)

    def _record_initial_state(self) -> None:
        if self.model is not None:
            self.store.append(
                {"type": "model_change", "provider": self.model.provider, "modelId": self.model.id}
            )
        self.store.append({"type": "thinking_level_change", "thinkingLevel": self.thinking_level})

    def _select_tools(self) -> dict[str, Tool]:
        if self.config.no_tools:
            return {}
        allow = self.config.tools
        if allow is None:
            default = self.config.settings.get("defaultTools")
            if isinstance(default, list):
                allow = [str(name) for name in default]
        if allow is None:
            # pi's declaration order for its built-ins, then other tools in load order
            names = sorted(self.all_tools, key=_tool_rank)
            return {n: self.all_tools[n] for n in names if getattr(self.all_tools[n], "default_active", True)}
        return {name: self.all_tools[name] for name in allow if name in self.all_tools}


def _fold_boundary(event: dict[str, Any], result: Any) -> None:
    if isinstance(result, dict):
        if "entries" in result:
            event["entries"] = list(result["entries"] or [])
        if "continue" in result:
            event["continue"] = bool(result["continue"])


def _tool_rank(name: str) -> int:
    return PI_TOOL_ORDER.index(name) if name in PI_TOOL_ORDER else len(PI_TOOL_ORDER)


def _last_assistant(messages: list[Any]) -> Any:
    for message in reversed(messages):
        if getattr(message, "role", None) == "assistant":
            return message
    return None


def resolve_cwd(cwd: str | None) -> str:
    return os.path.abspath(cwd or os.getcwd())
