"""The ``pi-messages`` wire API: the request pi 1.6.0 sends, and its event stream turned into the
host's stream events.

Request: ``POST <baseUrl>/messages`` (``?debug=1`` when ``options.extra["debug"]``) with
``{"model": id, "context": {"messages": [...]}, "options": {...}}``. The context is the
transcript in pi's JSON (system messages with their sections and ``toolsAdded`` included), since
the gateway converts it for the model behind it; ``options`` holds only what is set:
``temperature``, ``maxTokens``, ``reasoning`` (the pi level after the model's clamp, absent for
off), ``cacheRetention`` (``PI_CACHE_RETENTION=long`` when the session sets none), ``sessionId``,
``toolChoice``. Headers: ``authorization: Bearer <key>``, ``accept: text/event-stream``,
``content-type: application/json``, then the model's and the caller's headers.

Answer: one JSON event per SSE ``data:`` line, each shaped like pi's own stream events without
``partial`` (``text_start``/``_delta``/``_end``, ``thinking_*``, ``toolcall_*`` keyed by
``contentIndex``); ``done`` and ``error`` carry the final stop reason and the gateway's usage,
which is kept as reported (the gateway prices the request, so no local cost is computed).
"""

from __future__ import annotations

import contextlib
import http
import time
from typing import Any

import orjson

from pi_host.lib.llm.builder import MessageBuilder, guard
from pi_host.lib.llm.errors import ProviderHTTPError, error_text_from_body
from pi_host.lib.llm.http import open_sse, request_headers, run_request_hooks, stream_event_hook, user_agent
from pi_host.lib.llm.provider_env import env_value
from pi_host.lib.llm.tokens import clamp_thinking_level
from pi_host.lib.llm.transform import scrub_body
from pi_host.protocol import DoneEvent, Usage
from pi_host.protocol.messages import dump_message

DONE_REASONS = frozenset({"stop", "length", "toolUse"})
_BLOCK_TYPES = {"text": "text", "thinking": "thinking", "toolcall": "toolCall"}


def stream(model: Any, context: Any, options: Any) -> Any:
    """The ``pi-messages`` StreamFn: never raises, ends in one ``done`` or ``error`` event."""
    builder = MessageBuilder(model, options=options)
    return guard(builder, _run(builder, model, context, options), options.signal)


# --- the request --------------------------------------------------------------------------------


def endpoint(model: Any, options: Any) -> str:
    url = (model.base_url or "").rstrip("/") + "/messages"
    return url + "?debug=1" if (options.extra or {}).get("debug") else url


def wire_context(context: Any) -> dict[str, Any]:
    """The transcript as pi's ``TranscriptContext``: a context whose messages hold no system
    message but which declares tools gets the leading one pi's ``normalizeContext`` would make."""
    messages = [dump_message(message) for message in context.messages]
    first = messages[0] if messages else {}
    if first.get("role") == "system" and first.get("toolsAdded") == []:
        # pi's leading system message names tools only when there are some
        messages[0] = {name: value for name, value in first.items() if name != "toolsAdded"}
    tools = list(getattr(context, "tools", None) or ())
    if tools and not any(message.get("role") == "system" for message in messages):
        declared = [tool if isinstance(tool, dict) else tool.to_json() for tool in tools]
        messages.insert(0, {"role": "system", "content": "", "toolsAdded": declared, "timestamp": 0})
    return {"messages": messages}


def cache_retention(options: Any) -> str | None:
    # pi-host's StreamOptions says "short" when nothing chose a retention; pi then leaves the
    # field out (the gateway's default) unless the legacy PI_CACHE_RETENTION=long asks for long.
    chosen = getattr(options, "cache_retention", None)
    if chosen and chosen != "short":
        return chosen
    return "long" if env_value(options, "PI_CACHE_RETENTION") == "long" else None


def wire_options(model: Any, options: Any) -> dict[str, Any]:
    """pi's ``options`` object, in pi's key order, without the unset fields (JSON drops them)."""
    level = clamp_thinking_level(model, options.thinking_level) if options.thinking_level else "off"
    extra = options.extra or {}
    fields = {
        "temperature": options.temperature,
        "maxTokens": options.max_tokens,
        "reasoning": None if level == "off" else level,
        "cacheRetention": cache_retention(options),
        "sessionId": options.session_id,
        "toolChoice": extra.get("toolChoice"),
    }
    return {name: value for name, value in fields.items() if value is not None}


def build_request(
    model: Any, context: Any, options: Any, api_key: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """``(body, headers)`` of one request, before the plugin hooks."""
    body = {"model": model.id, "context": wire_context(context), "options": wire_options(model, options)}
    base = {
        "user-agent": user_agent(),
        "authorization": f"Bearer {api_key}",
        "accept": "text/event-stream",
        "content-type": "application/json",
    }
    return scrub_body(body), request_headers(model, options, base)


# --- errors -------------------------------------------------------------------------------------


def _error_object(body: str) -> dict[str, Any] | None:
    """The body when it is ``{"error": {...}}``, the gateway's error shape."""
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    return parsed if isinstance(error, dict) else None


def response_failure(model: Any, url: str, exc: ProviderHTTPError) -> tuple[str, dict[str, Any]]:
    """pi's text for a refused request (``<status> <reason>: <message> (<code>)``), and the
    ``pi_messages_response_failure`` diagnostic that goes with it. A note the HTTP layer added
    about a server-requested delay is kept: the session's auto-retry reads it."""
    body = exc.body or ""
    parsed = _error_object(body)
    error = parsed["error"] if parsed else {}
    message = error.get("message") if isinstance(error.get("message"), str) else None
    code = error.get("code") if isinstance(error.get("code"), str) else None
    try:
        reason = http.HTTPStatus(exc.status).phrase
    except ValueError:
        reason = ""
    text = f"{exc.status} {reason}: {message if message is not None else body}"
    text += f" ({code})" if code else ""
    plain = error_text_from_body(exc.status, body)
    original = str(exc)
    if original.startswith(plain) and len(original) > len(plain):
        text += original[len(plain) :]
    details: dict[str, Any] = {
        "version": 1,
        "provider": model.provider,
        "model": model.id,
        "url": url,
        "status": exc.status,
        "statusText": reason,
    }
    if parsed:
        details["error"] = error
    else:
        details["body"] = body if len(body) <= 8192 else body[:8192] + "…"
    details["timestampMs"] = int(time.time() * 1000)
    described: dict[str, Any] = {"name": "PiMessagesResponseError", "message": text}
    if code:
        described["code"] = code
    diagnostic = {
        "type": "pi_messages_response_failure",
        "timestamp": details["timestampMs"],
        "error": described,
        "details": details,
    }
    return text, diagnostic


# --- the stream ---------------------------------------------------------------------------------


class PiMessagesError(ValueError):
    """The gateway sent an event this side cannot apply (its text becomes the error message)."""


def _index(builder: MessageBuilder, event: dict[str, Any], kind: str) -> int:
    # The index comes from the wire and addresses the content list: a start must add the next
    # block, every other event must name a block that is open and of its own kind.
    index = event.get("contentIndex")
    size = len(builder.message.content)
    valid = isinstance(index, int) and not isinstance(index, bool)
    if kind.endswith("_start"):
        if not valid or index != size:
            raise PiMessagesError(
                f"Invalid contentIndex {orjson.dumps(index).decode()} in pi-messages {kind} event"
            )
        return index
    if not valid or not 0 <= index < size or not builder.is_open(index):
        raise PiMessagesError(
            f"Invalid contentIndex {orjson.dumps(index).decode()} in pi-messages {kind} event"
        )
    expected = _BLOCK_TYPES[kind.split("_", 1)[0]]
    if builder.block(index).type != expected:
        raise PiMessagesError(f"pi-messages {kind} event for a {builder.block(index).type} block")
    return index


def _finish(builder: MessageBuilder, event: dict[str, Any]) -> None:
    """What ``done`` and ``error`` carry besides the reason, copied onto the message."""
    message = builder.message
    usage = event.get("usage")
    if isinstance(usage, dict):
        try:
            message.usage = Usage.model_validate(usage)
        except ValueError:
            pass  # a malformed usage keeps the counts streamed so far
    for name, attribute in (
        ("responseId", "response_id"),
        ("responseModel", "response_model"),
        ("providerThinkingLevel", "provider_thinking_level"),
    ):
        if isinstance(event.get(name), str):
            setattr(message, attribute, event[name])
    rewrite = event.get("rewrite")
    if isinstance(rewrite, dict):
        note = {"type": "pi_messages_rewrite", "timestamp": int(time.time() * 1000), "details": dict(rewrite)}
        builder.add_diagnostic(note)
    if message.duration_ms is None:
        message.duration_ms = max(0, int(time.time() * 1000) - int(message.timestamp))
    builder.finished = True


def apply_event(builder: MessageBuilder, event: Any) -> list[Any]:
    """The host events for one pi-messages event; a ``done`` or ``error`` event is last in the
    list when the gateway ended the message. Raises :class:`PiMessagesError` for events that
    do not fit the message built so far."""
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise PiMessagesError("pi-messages event without a type")
    kind = event["type"]
    if kind == "text_start":
        return [builder.text_start(_index(builder, event, kind))]
    if kind == "text_delta":
        return [builder.text_delta(_index(builder, event, kind), str(event.get("delta") or ""))]
    if kind == "text_end":
        index = _index(builder, event, kind)
        content = event.get("content") if isinstance(event.get("content"), str) else None
        signature = event.get("contentSignature") if isinstance(event.get("contentSignature"), str) else None
        return [builder.text_end(index, content, signature=signature)]
    if kind == "thinking_start":
        return [builder.thinking_start(_index(builder, event, kind))]
    if kind == "thinking_delta":
        return [builder.thinking_delta(_index(builder, event, kind), str(event.get("delta") or ""))]
    if kind == "thinking_end":
        index = _index(builder, event, kind)
        if event.get("redacted") is True:
            builder.block(index).redacted = True
        content = event.get("content") if isinstance(event.get("content"), str) else None
        signature = event.get("contentSignature") if isinstance(event.get("contentSignature"), str) else None
        return [builder.thinking_end(index, content, signature=signature)]
    if kind == "toolcall_start":
        index = _index(builder, event, kind)
        return [
            builder.toolcall_start(
                index, id=str(event.get("id") or ""), name=str(event.get("toolName") or "")
            )
        ]
    if kind == "toolcall_delta":
        return [builder.toolcall_delta(_index(builder, event, kind), str(event.get("delta") or ""))]
    if kind == "toolcall_end":
        return [_toolcall_end(builder, _index(builder, event, kind), event.get("toolCall"))]
    if kind == "done":
        reason = event.get("reason")
        if reason not in DONE_REASONS:
            raise PiMessagesError(f"Unexpected stop reason in pi-messages done event: {reason}")
        events = builder.end_all()
        builder.message.stop_reason = reason
        _finish(builder, event)
        return [*events, DoneEvent(reason=reason, message=builder.message)]
    if kind == "error":
        text = event.get("errorMessage")
        failed = builder.fail(
            text if isinstance(text, str) else "Unknown error", aborted=event.get("reason") == "aborted"
        )
        _finish(builder, event)
        return [failed]
    return []  # "start" (sent once the stream opened) and kinds this version does not know


def _toolcall_end(builder: MessageBuilder, index: int, final: Any) -> Any:
    # The gateway's final call is authoritative: its arguments replace the streamed ones, and
    # its id, name and signature win over those of the start event.
    final = final if isinstance(final, dict) else {}
    arguments = final.get("arguments") if isinstance(final.get("arguments"), dict) else None
    block = builder.block(index)
    for name, attribute in (("id", "id"), ("name", "name"), ("thoughtSignature", "thought_signature")):
        if isinstance(final.get(name), str):
            setattr(block, attribute, final[name])
    return builder.toolcall_end(index, arguments)


async def _run(builder: MessageBuilder, model: Any, context: Any, options: Any) -> Any:
    # The adapter's own refusals read as pi words them, without an exception class in front.
    try:
        async for item in _exchange(builder, model, context, options):
            yield item
    except PiMessagesError as exc:
        if not builder.finished:
            yield builder.fail(str(exc))


async def _exchange(builder: MessageBuilder, model: Any, context: Any, options: Any) -> Any:
    api_key = options.api_key
    if not api_key:
        raise PiMessagesError(f'No API key provided for provider "{model.provider}"')
    url = endpoint(model, options)
    body, headers = build_request(model, context, options, api_key)
    body = await run_request_hooks(options, body, headers)
    emit = stream_event_hook(options)
    async with contextlib.AsyncExitStack() as stack:
        try:
            response = await stack.enter_async_context(
                open_sse(url, body=body, headers=headers, options=options)
            )
        except ProviderHTTPError as exc:
            if exc.status < 400:  # a refused redirect: the HTTP layer's line says it best
                raise
            text, diagnostic = response_failure(model, url, exc)
            failed = builder.fail(text)
            builder.add_diagnostic(diagnostic)
            yield failed
            return
        yield builder.start()
        async for batch in response.batches():
            for _name, data in batch:
                if data.strip() == b"[DONE]":
                    continue
                event = orjson.loads(data)
                if emit is not None:
                    await emit(event)
                for item in apply_event(builder, event):
                    yield item
                if builder.finished:
                    return
    raise PiMessagesError(f"{model.provider} stream ended without a terminal event")
