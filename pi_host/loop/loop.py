"""The low-level agent loop: one run = ``agent_start`` ... ``agent_end`` (reference §4.3-§4.5).

A run is a sequence of turns; a turn is one provider request plus the execution of the tool calls
in its answer. The loop knows no files, sessions or plugins: everything it may ask of the outside
world is a callback on :class:`LoopConfig`, and everything it does is reported through ``emit``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pi_host.loop import events
from pi_host.loop.tools import Tool, ToolContext, ToolResult
from pi_host.loop.validation import format_problems, validate_arguments
from pi_host.protocol import (
    AssistantMessage,
    LlmContext,
    StreamOptions,
    TextContent,
    ToolCall,
    ToolResultMessage,
    now_ms,
)
from pi_host.protocol.abort import NEVER, AbortSignal

Emit = Callable[[dict[str, Any]], Any]

ABORTED_TEXT = "Operation aborted"
LENGTH_TEXT = (
    "Tool call was not executed: the response hit the output token limit before it was complete. "
    "Issue the tool call again."
)


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


@dataclass
class LoopConfig:
    """Everything the loop may ask of its caller. Only ``model`` and ``stream_fn`` are required."""

    model: Any
    stream_fn: Callable[..., Any]
    """Resolves the stream function for a model: ``stream_fn(model) -> StreamFn``."""
    tools: dict[str, Tool] = field(default_factory=dict)
    thinking_level: str = "off"
    tool_execution: str = "parallel"
    signal: AbortSignal = NEVER
    tool_context: ToolContext | None = None
    stream_options: Callable[[], StreamOptions] | None = None
    convert_to_llm: Callable[[list[Any]], list[Any]] = lambda messages: list(messages)
    transform_context: Callable[[list[Any]], Awaitable[list[Any]] | list[Any]] | None = None
    get_api_key: Callable[[str], Awaitable[str | None] | str | None] | None = None
    declare_tool_changes: Callable[[list[Any], list[Any]], Awaitable[list[Any]] | list[Any]] | None = None
    prepare_request: Callable[[dict[str, Any]], Awaitable[Any] | Any] | None = None
    prepare_next_turn: Callable[[dict[str, Any]], Awaitable[Any] | Any] | None = None
    before_tool_call: Callable[[dict[str, Any]], Awaitable[Any] | Any] | None = None
    after_tool_call: Callable[[dict[str, Any]], Awaitable[Any] | Any] | None = None
    finish_turn: Callable[[dict[str, Any]], Awaitable[Any] | Any] | None = None
    get_steering_messages: Callable[[], Awaitable[list[Any]] | list[Any]] | None = None
    get_follow_up_messages: Callable[[], Awaitable[list[Any]] | list[Any]] | None = None


@dataclass
class _Prepared:
    call: ToolCall
    tool: Tool | None = None
    args: Any = None
    immediate: ToolResult | None = None
    result: ToolResult | None = None
    duration_ms: float | None = None


class AgentLoop:
    """Runs turns against ``context`` (the agent's message list, appended to in place)."""

    def __init__(self, config: LoopConfig, context: list[Any], emit: Emit) -> None:
        self.config = config
        self.context = context
        self._emit = emit
        self._terminating: set[str] = set()

    async def emit(self, event: dict[str, Any]) -> None:
        result = self._emit(event)
        if inspect.isawaitable(result):
            await result

    # --- the run ------------------------------------------------------------------------------

    async def run(self, prompts: list[Any]) -> list[Any]:
        """Run until the model stops asking for tools and no queued input remains."""
        cfg = self.config
        new_messages: list[Any] = []
        if cfg.declare_tool_changes is not None:
            prompts = await _maybe(cfg.declare_tool_changes(self.context, list(prompts)))
        await self.emit(events.agent_start())
        await self.emit(events.turn_start())
        for message in prompts:
            await self._add_message(message, new_messages)
        pending = await self._poll(cfg.get_steering_messages)
        turn_done = False
        continue_requested = False
        while True:
            more = True
            while more or pending:
                if turn_done:
                    if cfg.prepare_next_turn is not None:
                        decision = await _maybe(cfg.prepare_next_turn({"context": self.context}))
                        self._apply_request_decision(decision)
                        if isinstance(decision, dict) and decision.get("messages"):
                            pending = list(decision["messages"]) + pending
                    if not pending:
                        pending = await self._poll(cfg.get_steering_messages)
                    await self.emit(events.turn_start())
                if pending and cfg.declare_tool_changes is not None:
                    pending = await _maybe(cfg.declare_tool_changes(self.context, pending))
                for message in pending:
                    await self._add_message(message, new_messages)
                pending = []
                if cfg.prepare_request is not None:
                    decision = await _maybe(
                        cfg.prepare_request(
                            {"context": self.context, "model": cfg.model, "thinkingLevel": cfg.thinking_level}
                        )
                    )
                    self._apply_request_decision(decision)
                message = await self._stream_assistant()
                new_messages.append(message)
                continue_requested = False
                turn_done = True
                if message.stop_reason in ("error", "aborted"):
                    if cfg.finish_turn is not None:
                        await _maybe(cfg.finish_turn({"message": message, "toolResults": []}))
                    await self.emit(events.turn_end(message, []))
                    await self.emit(events.agent_end(new_messages))
                    return new_messages
                calls = message.tool_calls()
                if message.stop_reason == "length":
                    results = await self._fail_all(calls, LENGTH_TEXT)
                else:
                    results = await self._execute(calls)
                for result in results:
                    new_messages.append(result)
                more = bool(calls) and not all(r.tool_call_id in self._terminating for r in results)
                decision = None
                if cfg.finish_turn is not None:
                    decision = await _maybe(cfg.finish_turn({"message": message, "toolResults": results}))
                await self.emit(events.turn_end(message, results))
                action = decision.get("action") if isinstance(decision, dict) else None
                if action == "end":
                    await self.emit(events.agent_end(new_messages))
                    return new_messages
                if action == "continue":
                    continue_requested = True
                pending = await self._poll(cfg.get_steering_messages)
            follow_ups = await self._poll(cfg.get_follow_up_messages)
            if follow_ups:
                pending = follow_ups
                continue
            if continue_requested:
                continue_requested = False
                more = True
                pending = []
                # one more context-only request, then the loop resumes its normal checks
                continue
            break
        await self.emit(events.agent_end(new_messages))
        return new_messages

    def _apply_request_decision(self, decision: Any) -> None:
        if not isinstance(decision, dict):
            return
        if decision.get("context") is not None and decision["context"] is not self.context:
            self.context[:] = decision["context"]
        if decision.get("model") is not None:
            self.config.model = decision["model"]
        if decision.get("thinkingLevel") is not None:
            self.config.thinking_level = decision["thinkingLevel"]

    async def _poll(self, getter: Any) -> list[Any]:
        if getter is None:
            return []
        return list(await _maybe(getter()) or [])

    async def _add_message(self, message: Any, new_messages: list[Any]) -> None:
        await self.emit(events.message_start(message))
        self.context.append(message)
        new_messages.append(message)
        await self.emit(events.message_end(message))

    # --- one provider request -------------------------------------------------------------

    async def _stream_assistant(self) -> AssistantMessage:
        cfg = self.config
        model = cfg.model
        messages = list(self.context)
        if cfg.transform_context is not None:
            messages = await _maybe(cfg.transform_context(messages))
        llm_messages = cfg.convert_to_llm(messages)
        options = cfg.stream_options() if cfg.stream_options else StreamOptions()
        options.signal = cfg.signal
        if options.thinking_level is None:
            options.thinking_level = cfg.thinking_level
        if cfg.get_api_key is not None:
            options.api_key = await _maybe(cfg.get_api_key(model.provider))
        tools = [tool.declaration() for tool in cfg.tools.values()]
        state: dict[str, Any] = {"partial": None}
        started = time.monotonic()

        async def consume() -> AssistantMessage:
            stream = cfg.stream_fn(model)(model, LlmContext(messages=llm_messages, tools=tools), options)
            try:
                async for event in stream:
                    kind = event.type
                    if kind == "start":
                        state["partial"] = event.partial
                        self.context.append(event.partial)
                        await self.emit(events.message_start(event.partial))
                    elif kind == "done":
                        return event.message
                    elif kind == "error":
                        if getattr(event.error, "stop_reason", None) == "aborted":
                            await self._close_open_block(state)
                        return event.error
                    else:
                        if kind in ("text_start", "thinking_start", "text_end", "thinking_end"):
                            state["open"] = (
                                (kind[:-6], event.content_index) if kind.endswith("start") else None
                            )
                        await self.emit(events.message_update(state["partial"], event))
                raise RuntimeError("provider stream ended without a done or error event")
            finally:
                # close the provider's generator here, not whenever it is collected: an adapter
                # left suspended inside its HTTP response would be closed by asyncio at exit
                close = getattr(stream, "aclose", None)
                if close is not None:
                    await close()

        task = asyncio.ensure_future(consume())
        remove = cfg.signal.add_listener(task.cancel)
        try:
            final = await task
        except asyncio.CancelledError:
            if not cfg.signal.aborted:
                raise
            await self._close_open_block(state)
            final = self._failed_message(state["partial"], "aborted", ABORTED_TEXT)
        except Exception as exc:  # a provider broke its no-raise contract: still end cleanly
            text = f"{type(exc).__name__}: {exc}"
            for secret in options.secrets or ():  # the provider's own redaction did not run
                if len(secret) >= 8:
                    text = text.replace(secret, "[redacted]")
            final = self._failed_message(state["partial"], "error", text)
        finally:
            remove()
        if final.duration_ms is None:
            final.duration_ms = int((time.monotonic() - started) * 1000)
        final.thinking_level = cfg.thinking_level or "off"
        if state["partial"] is None:
            await self.emit(events.message_start(final))
            self.context.append(final)
        else:
            index = _last_index(self.context, state["partial"])
            if index is None:
                self.context.append(final)
            else:
                self.context[index] = final
        await self.emit(events.message_end(final))
        return final

    async def _close_open_block(self, state: dict[str, Any]) -> None:
        """An abort mid-block still ends the block (``text_end`` / ``thinking_end``), as pi does."""
        from pi_host.protocol.stream import TextEndEvent, ThinkingEndEvent

        kind, index = state.get("open") or (None, None)
        partial = state["partial"]
        if kind is None or partial is None or index >= len(partial.content):
            return
        block = partial.content[index]
        end = TextEndEvent if kind == "text" else ThinkingEndEvent
        text = getattr(block, "text", None) if kind == "text" else getattr(block, "thinking", None)
        await self.emit(
            events.message_update(partial, end(content_index=index, content=text or "", partial=partial))
        )

    def _failed_message(self, partial: AssistantMessage | None, reason: str, text: str) -> AssistantMessage:
        model = self.config.model
        if partial is not None:
            message = partial.model_copy()
        else:
            message = AssistantMessage(api=model.api, provider=model.provider, model=model.id)
        message.stop_reason = reason  # type: ignore[assignment]
        message.error_message = text
        return message

    # --- tools ----------------------------------------------------------------------------

    async def _fail_all(self, calls: list[ToolCall], text: str) -> list[ToolResultMessage]:
        results = []
        for call in calls:
            await self.emit(events.tool_execution_start(call.id, call.name, call.arguments))
            prepared = _Prepared(call=call, immediate=_error(text))
            results.append(await self._finish(prepared, prepared.immediate))
        for message in results:
            await self._emit_result_message(message)
        return results

    async def _execute(self, calls: list[ToolCall]) -> list[ToolResultMessage]:
        if not calls:
            return []
        cfg = self.config
        sequential = cfg.tool_execution == "sequential" or any(
            (tool := cfg.tools.get(c.name)) is not None and tool.execution_mode == "sequential" for c in calls
        )
        if sequential:
            results = []
            for call in calls:
                prepared = await self._prepare(call)
                if prepared.immediate is None:
                    await self._run_tool(prepared)
                message = await self._finish(prepared, prepared.immediate or prepared.result)
                await self._emit_result_message(message)
                results.append(message)
            return results
        prepared_calls = [await self._prepare(call) for call in calls]
        finished: dict[int, ToolResultMessage] = {}
        for index, prepared in enumerate(prepared_calls):
            if prepared.immediate is not None:
                finished[index] = await self._finish(prepared, prepared.immediate)

        async def run_and_finish(index: int, prepared: _Prepared) -> None:
            await self._run_tool(prepared)
            finished[index] = await self._finish(prepared, prepared.result)

        runnable = [run_and_finish(i, p) for i, p in enumerate(prepared_calls) if p.immediate is None]
        if runnable:
            await asyncio.gather(*runnable)
        results = [finished[i] for i in range(len(prepared_calls))]
        for message in results:
            await self._emit_result_message(message)
        return results

    async def _prepare(self, call: ToolCall) -> _Prepared:
        cfg = self.config
        await self.emit(events.tool_execution_start(call.id, call.name, call.arguments))
        prepared = _Prepared(call=call)
        if cfg.signal.aborted:
            prepared.immediate = _error(ABORTED_TEXT)
            return prepared
        tool = cfg.tools.get(call.name)
        if tool is None:
            prepared.immediate = _error(f"Tool {call.name} not found")
            return prepared
        prepared.tool = tool
        if call.arguments_error:
            prepared.immediate = _error(f'Invalid arguments for tool "{call.name}": {call.arguments_error}')
            return prepared
        try:
            args = tool.prepare_arguments(json.loads(json.dumps(call.arguments)))
        except Exception as exc:
            prepared.immediate = _error(str(exc) or type(exc).__name__)
            return prepared
        try:
            args, problems = validate_arguments(tool.parameters, args)
        except (re.error, RecursionError, TypeError, ValueError) as exc:  # a schema that escaped the check
            prepared.immediate = _error(f'Tool "{call.name}" has an unusable parameters schema: {exc}')
            return prepared
        if problems:
            prepared.immediate = _error(format_problems(call.name, problems, call.arguments))
            return prepared
        prepared.args = args
        if cfg.before_tool_call is not None:
            try:
                decision = await _maybe(cfg.before_tool_call({"toolCall": call, "args": args, "tool": tool}))
            except Exception as exc:
                prepared.immediate = _error(str(exc) or type(exc).__name__)
                return prepared
            if isinstance(decision, dict) and decision.get("block"):
                reason = decision.get("reason") or f"Tool call {call.name} was blocked"
                prepared.immediate = _error(reason, terminate=bool(decision.get("terminate")))
        return prepared

    async def _run_tool(self, prepared: _Prepared) -> None:
        cfg = self.config
        call = prepared.call
        assert prepared.tool is not None

        async def on_update(partial: Any) -> None:
            await self.emit(events.tool_execution_update(call.id, call.name, call.arguments, partial))

        started = time.monotonic()
        try:
            if cfg.signal.aborted:
                raise asyncio.CancelledError
            result = await prepared.tool.execute(
                call.id, prepared.args, cfg.signal, on_update, cfg.tool_context or ToolContext(cwd=".")
            )
            if not isinstance(result, ToolResult):
                result = ToolResult(content=[TextContent(text=str(result))])
        except asyncio.CancelledError:
            if not cfg.signal.aborted:
                raise
            result = _error(ABORTED_TEXT)
        except Exception as exc:
            result = _error(str(exc) or type(exc).__name__)
        prepared.duration_ms = round((time.monotonic() - started) * 1000)
        prepared.result = result

    async def _finish(self, prepared: _Prepared, result: ToolResult | None) -> ToolResultMessage:
        cfg = self.config
        call = prepared.call
        result = result or _error("Tool produced no result")
        if cfg.after_tool_call is not None:
            try:
                patch = await _maybe(
                    cfg.after_tool_call({"toolCall": call, "args": prepared.args, "result": result})
                )
            except Exception as exc:
                patch = None
                result = _error(str(exc) or type(exc).__name__)
            if isinstance(patch, ToolResult):
                result = patch
        result_json: dict[str, Any] = {"content": [_block_json(b) for b in result.content]}
        if result.details is not None:
            result_json["details"] = result.details
        if result.structured_content is not None:
            result_json["structuredContent"] = result.structured_content
        await self.emit(
            events.tool_execution_end(call.id, call.name, result_json, result.is_error, prepared.duration_ms)
        )
        message = ToolResultMessage(
            tool_call_id=call.id,
            tool_name=call.name,
            content=list(result_json["content"]),
            is_error=result.is_error,
            details=result.details,
            usage=result.usage,
            duration_ms=prepared.duration_ms,
            timestamp=now_ms(),
        )
        if result.terminate:
            self._terminating.add(call.id)
        return message

    async def _emit_result_message(self, message: ToolResultMessage) -> None:
        await self.emit(events.message_start(message))
        self.context.append(message)
        await self.emit(events.message_end(message))


def _error(text: str, terminate: bool = False) -> ToolResult:
    return ToolResult(content=[TextContent(text=text)], is_error=True, terminate=terminate)


def _block_json(block: Any) -> Any:
    return block.to_json() if hasattr(block, "to_json") else block


def _last_index(items: list[Any], target: Any) -> int | None:
    for index in range(len(items) - 1, -1, -1):
        if items[index] is target:
            return index
    return None
