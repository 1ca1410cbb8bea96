"""Streams a scripted response as AssistantMessageEvents, exactly as a real provider would."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pi_host.abort import AbortError, race
from pi_host.protocol import (
    AssistantMessage,
    DoneEvent,
    ErrorEvent,
    StartEvent,
    TextContent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingContent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    Usage,
)
from pi_provider_faux import script


def _text_of(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    parts = []
    for block in content or ():
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "thinking":
            parts.append(block.thinking)
        elif kind == "toolCall":
            parts.append(block.name + json.dumps(block.arguments))
    return "".join(parts)


def _estimate(messages: list[Any]) -> int:
    chars = 0
    for message in messages:
        chars += len(_text_of(message))
        if getattr(message, "role", None) == "system":
            chars += sum(len(v or "") for v in (message.sections or {}).values())
    return (chars + 3) // 4


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _last_tool_result(messages: list[Any]) -> str:
    for message in reversed(messages):
        if getattr(message, "role", None) == "toolResult":
            return _text_of(message)
    return ""


def _echo(messages: list[Any]) -> dict[str, Any]:
    for message in reversed(messages):
        if getattr(message, "role", None) == "user":
            return {"text": f"faux: {_text_of(message)}"}
    return {"text": "faux: (no prompt)"}


async def stream(model: Any, context: Any, options: Any):
    script.requests.append(
        {
            "model": model.id,
            "messages": list(context.messages),
            "tools": list(context.tools),
            "options": options,
        }
    )
    response = script.next_response(context) or _echo(context.messages)
    partial = AssistantMessage(api=model.api, provider=model.provider, model=model.id, stop_reason="pending")
    delay = (response.get("delayMs") or 0) / 1000
    size = max(1, int(response.get("chunkSize") or 8))
    signal = options.signal

    async def pause() -> None:
        if delay:
            await race(signal, asyncio.sleep(delay))
        elif signal is not None:
            signal.throw_if_aborted()

    try:
        await pause()
        yield StartEvent(partial=partial)
        thinking = response.get("thinking")
        if thinking:
            index = len(partial.content)
            partial.content.append(ThinkingContent(thinking="", thinking_signature="faux"))
            yield ThinkingStartEvent(content_index=index, partial=partial)
            for piece in _chunks(thinking, size):
                await pause()
                partial.content[index].thinking += piece
                yield ThinkingDeltaEvent(content_index=index, delta=piece, partial=partial)
            yield ThinkingEndEvent(content_index=index, content=thinking, partial=partial)
        text = response.get("text")
        if text:
            text = text.replace("{{lastToolResult}}", _last_tool_result(context.messages))
            index = len(partial.content)
            partial.content.append(TextContent(text=""))
            yield TextStartEvent(content_index=index, partial=partial)
            for piece in _chunks(text, size):
                await pause()
                partial.content[index].text += piece
                yield TextDeltaEvent(content_index=index, delta=piece, partial=partial)
            yield TextEndEvent(content_index=index, content=text, partial=partial)
        if response.get("error"):
            await pause()
            partial.stop_reason = "error"
            partial.error_message = str(response["error"])
            yield ErrorEvent(reason="error", error=partial)
            return
        for number, call in enumerate(response.get("toolCalls") or ()):
            index = len(partial.content)
            call_id = call.get("id") or f"faux_call_{len(script.requests)}_{number}"
            raw = call.get("rawArguments")
            raw = raw if raw is not None else json.dumps(call.get("arguments", {}))
            block = ToolCall(id=call_id, name=call["name"], arguments={})
            partial.content.append(block)
            yield ToolCallStartEvent(content_index=index, partial=partial)
            for piece in _chunks(raw, size * 4):
                await pause()
                yield ToolCallDeltaEvent(content_index=index, delta=piece, partial=partial)
            try:
                parsed = json.loads(raw)
            except ValueError as exc:
                parsed = None
                block.arguments_error = f"{exc}; received: {raw}"
            if isinstance(parsed, dict):
                block.arguments = parsed
            elif block.arguments_error is None:
                block.arguments_error = f"arguments are not a JSON object; received: {raw}"
            yield ToolCallEndEvent(content_index=index, tool_call=block, partial=partial)
        usage = Usage(input=_estimate(context.messages), output=max(1, len(_text_of(partial)) // 4))
        for key, value in (response.get("usage") or {}).items():
            setattr(usage, key if key in Usage.model_fields else _snake(key), value)
        usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
        partial.usage = usage
        stop = response.get("stopReason") or ("toolUse" if partial.tool_calls() else "stop")
        partial.stop_reason = stop
        partial.raw_stop_reason = stop
        partial.response_id = f"faux_{len(script.requests)}"
        if stop in ("error", "aborted"):
            partial.error_message = response.get("errorMessage") or stop
            yield ErrorEvent(reason=stop, error=partial)
        else:
            yield DoneEvent(reason=stop, message=partial)
    except AbortError:
        partial.stop_reason = "aborted"
        partial.error_message = "Operation aborted"
        yield ErrorEvent(reason="aborted", error=partial)


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name)
