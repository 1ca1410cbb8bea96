"""Streams a scripted response as AssistantMessageEvents, exactly as a real provider would: the
events come from the shared :class:`~pi_host.lib.llm.builder.MessageBuilder` (so tool-call arguments
are best-effort partial dicts on every delta and parsed strictly at the end), wrapped in
:func:`~pi_host.lib.llm.builder.guard` (abort and failures end as one ``error`` event).

It stands in for a real provider, so the provider hooks fire as for one: the request body
(``before_provider_request``, which may replace it), the request headers
(``before_provider_headers``), a 200 response whose headers echo the request's
(``after_provider_response``) and one raw stream event per scripted chunk
(``provider_stream_event``)."""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

from pi_host.lib.llm.builder import MessageBuilder, guard
from pi_host.lib.llm.hooks import run_request_hooks, stream_event_hook
from pi_host.protocol import Usage
from pi_host.protocol.abort import race
from pi_provider_faux import script

ABORTED = "Operation aborted"


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


def stream(model: Any, context: Any, options: Any):
    builder = MessageBuilder(model, options=options)
    return guard(builder, _run(builder, model, context, options), options.signal, aborted_message=ABORTED)


async def _call(callback: Any, *args: Any) -> Any:
    if callback is None:
        return None
    result = callback(*args)
    return await result if inspect.isawaitable(result) else result


async def _open(model: Any, context: Any, options: Any) -> dict[str, Any]:
    """What a real provider does before its first byte: body and headers through the hooks."""
    body = {
        "model": model.id,
        "messages": [m.to_json() if hasattr(m, "to_json") else m for m in context.messages],
        "tools": [t.to_json() for t in context.tools],
        "thinkingLevel": options.thinking_level or "off",
    }
    headers: dict[str, Any] = {"content-type": "application/json", "x-faux-model": model.id}
    body = await run_request_hooks(options, body, headers)
    headers = {k: v for k, v in headers.items() if v is not None}
    await _call(options.on_response, 200, {**headers, "content-type": "text/event-stream"})
    return body


async def _run(builder: MessageBuilder, model: Any, context: Any, options: Any):
    payload = await _open(model, context, options)
    script.requests.append(
        {
            "model": model.id,
            "messages": list(context.messages),
            "tools": list(context.tools),
            "options": options,
            "payload": payload,
        }
    )
    emit = stream_event_hook(options)
    response = script.next_response(context) or _echo(context.messages)
    delay = (response.get("delayMs") or 0) / 1000
    size = max(1, int(response.get("chunkSize") or 8))
    signal = options.signal

    async def pause() -> None:
        if delay:
            await race(signal, asyncio.sleep(delay))
        elif signal is not None:
            signal.throw_if_aborted()

    await pause()
    yield builder.start()
    thinking = response.get("thinking")
    if thinking:
        yield builder.thinking_start("thinking", signature="faux")
        for piece in _chunks(thinking, size):
            await pause()
            if emit is not None:
                await emit({"type": "thinking", "delta": piece})
            yield builder.thinking_delta("thinking", piece)
        yield builder.thinking_end("thinking")
    text = response.get("text")
    if text:
        text = text.replace("{{lastToolResult}}", _last_tool_result(context.messages))
        if "{{userMessages}}" in text:
            said = " | ".join(_text_of(m) for m in context.messages if getattr(m, "role", None) == "user")
            text = text.replace("{{userMessages}}", said)
        yield builder.text_start("text")
        for piece in _chunks(text, size):
            await pause()
            if emit is not None:
                await emit({"type": "text", "delta": piece})
            yield builder.text_delta("text", piece)
        yield builder.text_end("text")
    if response.get("error"):
        await pause()
        yield builder.fail(str(response["error"]))
        return
    for number, call in enumerate(response.get("toolCalls") or ()):
        call_id = call.get("id") or f"faux_call_{len(script.requests)}_{number}"
        raw = call.get("rawArguments")
        raw = raw if raw is not None else json.dumps(call.get("arguments", {}))
        yield builder.toolcall_start(number, id=call_id, name=call["name"])
        for piece in _chunks(raw, size * 4):
            await pause()
            if emit is not None:
                await emit({"type": "toolCall", "id": call_id, "delta": piece})
            yield builder.toolcall_delta(number, piece)
        yield builder.toolcall_end(number)
    message = builder.message
    usage = Usage(input=_estimate(context.messages), output=max(1, len(_text_of(message)) // 4))
    for key, value in (response.get("usage") or {}).items():
        setattr(usage, key if key in Usage.model_fields else _snake(key), value)
    message.usage = usage
    stop = response.get("stopReason") or ("toolUse" if message.tool_calls() else "stop")
    message.response_id = f"faux_{len(script.requests)}"
    error = (response.get("errorMessage") or stop) if stop in ("error", "aborted") else None
    for event in builder.done(stop, raw=stop, error_message=error):
        yield event


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name)
