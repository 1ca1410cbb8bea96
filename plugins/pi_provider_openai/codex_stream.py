"""One Codex request over the configured transport (facts from pi 1.6.0).

``auto`` (the default), ``websocket`` and ``websocket-cached`` try the WebSocket first. Two
failures are retried once on it: the backend's ``websocket_connection_limit_reached`` before the
answer started, and ``previous_response_not_found`` (the socket forgot the answer a continued
request pointed at; the retry opens a new socket and sends the whole body). Any other transport
failure is recorded on the reply as a ``provider_transport_failure`` diagnostic; before the
answer started the request goes on over SSE and so does every later request of the session,
after it the reply ends in that error. ``sse`` sends SSE only.

The events on both transports are the Responses stream's; :class:`ResponsesParser` turns them
into host events after the Codex-specific ones are taken out: an ``error`` event and
``response.failed`` end the request with the backend's words.

The SSE body is zstd-compressed (``content-encoding: zstd``, level 3) when a zstd codec is
importable: ``compression.zstd`` (Python 3.14) or the optional ``zstandard`` package
(``pip install 'pi-host[zstd]'``); without one it goes uncompressed, which the backend accepts.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from pi_host.lib.llm.builder import MessageBuilder
from pi_host.lib.llm.http import idle_timeout, open_sse, run_request_hooks, stream_event_hook
from pi_provider_openai import codex_ws
from pi_provider_openai.codex_ws import (
    COMPLETION_TYPES,
    CodexApiError,
    CodexError,
    CodexProtocolError,
    StreamEventHookError,
    cache_session_id,
    websocket_headers,
    websocket_url,
)
from pi_provider_openai.responses_request import convert_input
from pi_provider_openai.responses_stream import ResponsesParser
from pi_provider_openai.shared import loads, scrub_body, transform

TRANSPORTS = ("auto", "sse", "websocket", "websocket-cached")
CONNECTION_LIMIT = "websocket_connection_limit_reached"
PREVIOUS_RESPONSE_NOT_FOUND = "previous_response_not_found"
ZSTD_LEVEL = 3
_OUTPUT_ITEMS = ("function_call_output", "custom_tool_call_output")


def configured_transport(options: Any) -> str:
    """pi's ``transport`` setting: a ``transport`` option if the host passes one, else
    ``options.extra["transport"]``; anything unknown is ``auto``."""
    value = getattr(options, "transport", None) or (getattr(options, "extra", None) or {}).get("transport")
    return value if value in TRANSPORTS else "auto"


def compact_json(value: Any) -> bytes:
    """JSON as pi's ``JSON.stringify`` writes it (no spaces, UTF-8)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def compress_zstd(data: bytes) -> bytes | None:
    """``data`` zstd-compressed, or None when no zstd codec is installed."""
    try:
        from compression import zstd  # type: ignore[import-not-found]  # Python 3.14+

        return zstd.compress(data, level=ZSTD_LEVEL)
    except ImportError:
        pass
    try:
        import zstandard  # type: ignore[import-not-found]
    except ImportError:
        return None
    return zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(data)


def transport_diagnostic(
    error: BaseException, transport: str, started: bool, request_bytes: int
) -> dict[str, Any]:
    """The ``provider_transport_failure`` entry pi appends to the reply's ``diagnostics``."""
    described: dict[str, Any] = {"name": type(error).__name__, "message": str(error) or type(error).__name__}
    code = getattr(error, "code", None)
    if isinstance(code, (str, int)) and not isinstance(code, bool):
        described["code"] = code
    details: dict[str, Any] = {"configuredTransport": transport}
    if not started:
        details["fallbackTransport"] = "sse"
    details.update({
        "eventsEmitted": started,
        "phase": "after_message_stream_start" if started else "before_message_stream_start",
        "requestBytes": request_bytes,
    })  # fmt: skip
    return {"type": "provider_transport_failure", "timestamp": int(time.time() * 1000),
            "error": described, "details": details}  # fmt: skip


async def run(
    builder: MessageBuilder, model: Any, url: str, body: dict[str, Any], headers: dict[str, str], options: Any
) -> AsyncIterator[Any]:
    """The request's events, whichever transport carries them. The backend's own failures end
    the stream with their text (no class name in front), as pi words them."""
    try:
        body = await run_request_hooks(options, body, headers)  # once, for both transports
        transport = configured_transport(options)
        session = cache_session_id(options)
        account = headers.get("chatgpt-account-id") or ""
        started = [False]  # the start event went out (on either transport)
        if transport != "sse" and codex_ws.fallback_active(session):
            codex_ws.record_sse_fallback(session)
        elif transport != "sse":
            ws_headers = websocket_headers(headers, session or str(uuid.uuid4()))
            attempt = _websocket(builder, model, websocket_url(model.base_url), body, ws_headers, options,
                                 transport, session, account, started)  # fmt: skip
            async with aclosing(attempt) as events:
                async for event in events:
                    yield event
            if builder.finished:
                return
        async with aclosing(_sse(builder, url, body, headers, options, started)) as events:
            async for event in events:
                yield event
    except CodexError as error:
        yield builder.fail(str(error))


async def _websocket(
    builder: MessageBuilder, model: Any, url: str, body: dict[str, Any], headers: dict[str, str],
    options: Any, transport: str, session: str | None, account: str, started: list[bool],
) -> AsyncIterator[Any]:  # fmt: skip
    """The WebSocket attempts: ends without a terminal event when the request must go on over
    SSE (the failure recorded), raises when it must not."""
    retried_limit = retried_missing = False
    while True:
        began = [False]  # this attempt received an event
        try:
            async with aclosing(_one_socket_request(builder, model, url, body, headers, options, transport,
                                                    session, account, started, began)) as events:  # fmt: skip
                async for event in events:
                    yield event
            return
        except Exception as error:  # noqa: BLE001 - sorted below, as pi sorts them
            code = getattr(error, "code", None) if isinstance(error, CodexApiError) else None
            if code == PREVIOUS_RESPONSE_NOT_FOUND and not retried_missing:
                retried_missing = True
                continue
            limit_before_start = code == CONNECTION_LIMIT and not began[0]
            if limit_before_start and not retried_limit:
                retried_limit = True
                continue
            signal = options.signal
            if (signal is not None and signal.aborted) or (
                not codex_ws.is_transport_failure(error) and not limit_before_start
            ):
                raise
            size = len(compact_json(body))
            builder.add_diagnostic(transport_diagnostic(error, transport, began[0], size))
            codex_ws.record_failure(session, error)
            if began[0]:
                raise
            codex_ws.record_sse_fallback(session)
            return


async def _one_socket_request(
    builder: MessageBuilder, model: Any, url: str, body: dict[str, Any], headers: dict[str, str],
    options: Any, transport: str, session: str | None, account: str, started: list[bool], began: list[bool],
) -> AsyncIterator[Any]:  # fmt: skip
    idle_s = idle_timeout(options)[0]
    connect_ms = (options.extra or {}).get("websocketConnectTimeoutMs")
    connect_s = connect_ms / 1000 if isinstance(connect_ms, (int, float)) else codex_ws.CONNECT_TIMEOUT_S
    lease = await codex_ws.acquire(url, headers, session, account, connect_s)
    cached_context = transport in ("auto", "websocket-cached")
    sent = codex_ws.continued_body(lease.entry, body) if cached_context and lease.entry else body
    codex_ws.count_request(session, sent, lease.reused, cached_context)
    keep = False
    try:
        await codex_ws.send(lease.socket, compact_json({"type": "response.create", **sent}).decode())
        parser = ResponsesParser(builder)
        async for event in _mapped(builder, parser, codex_ws.frames(lease.socket, idle_s), options):
            if not began[0]:
                began[0] = True
                if not started[0]:
                    started[0] = True
                    yield builder.start()
            for out in parser.feed(event):
                yield out
        finished = parser.finish()  # the blocks are closed before the answer is remembered
        aborted = bool(options.signal and options.signal.aborted)
        response_id = builder.message.response_id
        if cached_context and lease.entry and response_id and not aborted:
            items = _answer_items(model, builder)
            lease.entry.continuation = codex_ws.Continuation(body, response_id, items)
        keep = not aborted
        for out in finished:
            yield out
    finally:
        if lease.entry is not None and not keep:
            lease.entry.continuation = None
        lease.release(keep)


def _answer_items(model: Any, builder: MessageBuilder) -> list[dict[str, Any]]:
    """The answer as the next request's ``input`` will replay it (tool outputs left out: they
    are the next request's new input)."""
    message = builder.message
    items = convert_input(model, transform(model, [message]), {})
    return scrub_body({"input": [i for i in items if i.get("type") not in _OUTPUT_ITEMS]})["input"]


async def _mapped(
    builder: MessageBuilder, parser: ResponsesParser, events: AsyncIterator[dict[str, Any]], options: Any
) -> AsyncIterator[dict[str, Any]]:
    """The events the parser takes, up to the completion: the stream-event hook sees each one
    first; ``error`` and ``response.failed`` raise :class:`CodexApiError`; the completion's
    ``end_turn`` goes on the reply."""
    emit = stream_event_hook(options)
    async with aclosing(events) as source:
        async for event in source:
            if emit is not None:
                try:
                    await emit(event)
                except Exception as exc:  # noqa: BLE001 - a listener's failure is not the socket's
                    raise StreamEventHookError(str(exc) or type(exc).__name__) from exc
            kind = event.get("type")
            if not isinstance(kind, str):
                continue
            if kind == "error":
                nested = event.get("error") if isinstance(event.get("error"), dict) else {}
                code = event.get("code") if isinstance(event.get("code"), str) else nested.get("code")
                text = (
                    event.get("message") if isinstance(event.get("message"), str) else nested.get("message")
                )
                raise CodexApiError(f"Codex error: {text or code or json.dumps(event)}", code, event)
            if kind == "response.failed":
                error = (event.get("response") or {}).get("error") or {}
                raise CodexApiError(error.get("message") or "Codex response failed", error.get("code"), event)
            yield event
            if kind in COMPLETION_TYPES:
                end_turn = (event.get("response") or {}).get("end_turn")
                if isinstance(end_turn, bool):
                    builder.message.end_turn = end_turn
                return


async def _sse_events(response: Any) -> AsyncIterator[dict[str, Any]]:
    async for batch in response.batches():
        for _name, data in batch:
            if not data or data == b"[DONE]":
                continue
            try:
                event = loads(data)
            except ValueError as exc:
                raise CodexProtocolError(f"Invalid Codex SSE JSON: {exc}") from None
            if isinstance(event, dict):
                yield event


async def _sse(
    builder: MessageBuilder, url: str, body: dict[str, Any], headers: dict[str, str], options: Any,
    started: list[bool],
) -> AsyncIterator[Any]:  # fmt: skip
    payload = compact_json(body)
    compressed = compress_zstd(payload)
    if compressed is not None:
        headers = {**headers, "content-encoding": "zstd"}
    async with open_sse(url, body=compressed or payload, headers=headers, options=options) as response:
        if not started[0]:
            started[0] = True
            yield builder.start()
        parser = ResponsesParser(builder)
        async for event in _mapped(builder, parser, _sse_events(response), options):
            for out in parser.feed(event):
                yield out
        for out in parser.finish():
            yield out
