"""The Codex backend's WebSocket transport (provider ``openai-codex``; facts from pi 1.6.0).

One socket per (session, account) is kept open between requests of a session, as pi keeps it:
at most 45 minutes old when a request takes it (the server drops sockets at 60 minutes, even
mid-answer), closed after 5 minutes unused. A second request while the socket is busy gets a
socket of its own, closed after its answer. A request is one text frame, ``{"type":
"response.create", ...body}``, and the answer is the Responses stream's JSON events, one per
frame, up to ``response.completed`` / ``response.done`` / ``response.incomplete``.

On a reused socket the backend remembers the last answer of that connection, so a request whose
body is the previous one plus the answer's items plus new input is sent as only the new input
with ``previous_response_id`` (pi's "cached context", for the ``auto`` and ``websocket-cached``
transports). Anything else sends the whole body.

The per-session SSE fallback state and the debug counters live here too, keyed by session id.
``websockets`` is imported on the first connection only (the start-up import budget).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

OPENAI_BETA_WEBSOCKETS = "responses_websockets=2026-02-06"
CONNECT_TIMEOUT_S = 15.0
SESSION_IDLE_TTL_S = 5 * 60.0
SESSION_MAX_AGE_S = 45 * 60.0
MESSAGE_TOO_BIG = 1009
MAX_MESSAGE_BYTES = 256 * 1024 * 1024  # a whole answer can come in one response.completed frame
COMPLETION_TYPES = frozenset({"response.completed", "response.done", "response.incomplete"})
DEFAULT_BASE_URL = "https://chatgpt.com/backend-api"
PROMPT_CACHE_KEY_MAX = 64  # the backend's limit on prompt_cache_key, which is the session id


# --- addresses and ids ----------------------------------------------------------------------


def codex_url(base_url: str) -> str:
    base = (base_url or "").strip().rstrip("/") or DEFAULT_BASE_URL
    if base.endswith("/codex/responses"):
        return base
    return base + ("/responses" if base.endswith("/codex") else "/codex/responses")


def websocket_url(base_url: str) -> str:
    """The same endpoint with the WebSocket scheme (``https`` → ``wss``, ``http`` → ``ws``)."""
    url = codex_url(base_url)
    for plain, secure in (("https://", "wss://"), ("http://", "ws://")):
        if url.startswith(plain):
            return secure + url[len(plain) :]
    return url


def cache_session_id(options: Any) -> str | None:
    """The session id the backend sees (clamped to 64 characters), or None when caching is off."""
    if not options.session_id or options.cache_retention == "none":
        return None
    return options.session_id[:PROMPT_CACHE_KEY_MAX]


def websocket_headers(sse_headers: dict[str, Any], request_id: str) -> dict[str, str]:
    """The upgrade request's headers: the SSE ones without ``accept``, ``content-type`` and the
    SSE beta, with the WebSocket beta and ``request_id`` (the session id, else a fresh id) as
    ``session-id`` and ``x-client-request-id``."""
    dropped = {"accept", "content-type", "openai-beta", "session-id", "x-client-request-id"}
    headers = {k: v for k, v in sse_headers.items() if v is not None and k.lower() not in dropped}
    headers.update({
        "openai-beta": OPENAI_BETA_WEBSOCKETS, "x-client-request-id": request_id, "session-id": request_id,
    })  # fmt: skip
    return headers


# --- errors -----------------------------------------------------------------------------------


class CodexError(Exception):
    """A failure told in its own words (the error event's text is ``str(error)``)."""


class CodexApiError(CodexError):
    """The backend said no (an ``error`` event or ``response.failed``): not a transport failure."""

    def __init__(self, message: str, code: str | None = None, payload: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.payload = payload


class CodexProtocolError(CodexError):
    """A frame or SSE event that is not JSON: not a transport failure either."""


class StreamEventHookError(CodexError):
    """A ``provider_stream_event`` listener raised: kept out of the retries and the fallback."""


class WebSocketCloseError(CodexError):
    def __init__(self, code: int | None, reason: str = "") -> None:
        words = reason or ("message too big" if code == MESSAGE_TOO_BIG else "")
        super().__init__(" ".join(str(p) for p in ("WebSocket closed", code, words) if p not in (None, "")))
        self.code = code
        self.reason = reason or None


class WebSocketTransportError(CodexError):
    """The connection could not be opened or was lost (connect refused, upgrade refused, timeout)."""

    def __init__(self, message: str, code: Any = None) -> None:
        super().__init__(message)
        self.code = code


def is_transport_failure(error: BaseException) -> bool:
    return not isinstance(error, (CodexApiError, CodexProtocolError, StreamEventHookError))


# --- per-session state ----------------------------------------------------------------------------

_fallback_sessions: set[str] = set()
_stats: dict[str, dict[str, Any]] = {}


def stats(session_id: str) -> dict[str, Any] | None:
    """A copy of a session's counters (pi's ``getOpenAICodexWebSocketDebugStats``)."""
    found = _stats.get(session_id)
    return dict(found) if found is not None else None


def _stats_of(session_id: str) -> dict[str, Any]:
    return _stats.setdefault(session_id, {
        "requests": 0, "connectionsCreated": 0, "connectionsReused": 0, "cachedContextRequests": 0,
        "storeTrueRequests": 0, "fullContextRequests": 0, "deltaRequests": 0, "lastInputItems": 0,
        "websocketFailures": 0, "sseFallbacks": 0,
    })  # fmt: skip


def reset(session_id: str | None = None) -> None:
    """Forget the counters and the SSE fallback of one session, or of all."""
    if session_id:
        _stats.pop(session_id, None)
        _fallback_sessions.discard(session_id)
    else:
        _stats.clear()
        _fallback_sessions.clear()


def fallback_active(session_id: str | None) -> bool:
    return bool(session_id) and session_id in _fallback_sessions


def record_sse_fallback(session_id: str | None) -> None:
    if session_id:
        counters = _stats_of(session_id)
        counters["sseFallbacks"] += 1
        counters["websocketFallbackActive"] = fallback_active(session_id)


def record_failure(session_id: str | None, error: BaseException) -> None:
    """A WebSocket failure sends the rest of the session over SSE (sessions without an id retry
    the WebSocket on each request, as pi does)."""
    if not session_id:
        return
    _fallback_sessions.add(session_id)
    counters = _stats_of(session_id)
    counters["websocketFailures"] += 1
    counters["lastWebSocketError"] = str(error) or type(error).__name__
    counters["websocketFallbackActive"] = True


# --- connections --------------------------------------------------------------------------------


@dataclass
class Continuation:
    body: dict[str, Any]
    response_id: str
    items: list[dict[str, Any]]


@dataclass
class _Entry:
    socket: Any
    loop: asyncio.AbstractEventLoop
    created: float = field(default_factory=time.monotonic)
    busy: bool = True
    idle_timer: asyncio.TimerHandle | None = None
    continuation: Continuation | None = None


_cache: dict[str, dict[str, _Entry]] = {}
_closing: set[asyncio.Task[Any]] = set()


def _is_open(socket: Any) -> bool:
    from websockets.protocol import State

    return socket.state is State.OPEN


def close_quietly(socket: Any, reason: str = "done") -> None:
    """Close without waiting for the goodbye (a cancelled request cannot wait); the closing
    task is held so it is not collected mid-way."""
    try:
        task = asyncio.get_running_loop().create_task(socket.close(1000, reason))
    except RuntimeError:  # no loop running any more: drop the connection
        transport = getattr(socket, "transport", None)
        if transport is not None:
            transport.abort()
        return
    _closing.add(task)
    task.add_done_callback(_closing.discard)


def _forget(session_id: str, account: str, entry: _Entry) -> None:
    accounts = _cache.get(session_id)
    if accounts is not None and accounts.get(account) is entry:
        del accounts[account]
        if not accounts:
            del _cache[session_id]


def close_sessions(session_id: str | None = None) -> None:
    """Close the kept sockets of one session, or all (pi's ``closeOpenAICodexWebSocketSessions``)."""
    for sid in [session_id] if session_id else list(_cache):
        for entry in (_cache.pop(sid, None) or {}).values():
            if entry.idle_timer is not None:
                entry.idle_timer.cancel()
            close_quietly(entry.socket, "debug_close")


async def connect(url: str, headers: dict[str, str], timeout_s: float | None = CONNECT_TIMEOUT_S) -> Any:
    """Open a socket; every failure becomes a :class:`WebSocketTransportError`."""
    from websockets.asyncio.client import connect as ws_connect
    from websockets.exceptions import InvalidStatus, WebSocketException

    tls = None
    if url.startswith("wss:"):
        from pi_host.lib.llm.tls import client_tls_context

        tls = client_tls_context()
    opener = ws_connect(
        url, additional_headers=list(headers.items()), user_agent_header=None, open_timeout=None,
        max_size=MAX_MESSAGE_BYTES, ssl=tls,
    )  # fmt: skip
    try:
        return await asyncio.wait_for(opener, timeout_s) if timeout_s else await opener
    except TimeoutError:
        raise WebSocketTransportError(
            f"WebSocket connect timeout after {int((timeout_s or 0) * 1000)}ms"
        ) from None
    except InvalidStatus as exc:
        status = exc.response.status_code
        raise WebSocketTransportError(f"WebSocket upgrade refused: HTTP {status}", status) from exc
    except (OSError, WebSocketException) as exc:
        code = getattr(exc, "errno", None)
        raise WebSocketTransportError(
            f"WebSocket connection failed: {exc or type(exc).__name__}", code
        ) from exc


@dataclass
class Lease:
    socket: Any
    entry: _Entry | None
    reused: bool
    release: Callable[[bool], None]


async def acquire(
    url: str, headers: dict[str, str], session_id: str | None, account: str, timeout_s: float | None
) -> Lease:
    """The session's kept socket when it is free, open and young enough, else a new one (kept
    for the session unless the kept one is busy)."""
    loop = asyncio.get_running_loop()
    if not session_id:
        socket = await connect(url, headers, timeout_s)
        return Lease(socket, None, False, lambda keep: close_quietly(socket))
    cached = _cache.get(session_id, {}).get(account)
    if cached is not None and cached.loop is not loop:
        _forget(session_id, account, cached)  # a socket of an earlier event loop cannot be used here
        cached = None
    if cached is not None:
        if cached.idle_timer is not None:
            cached.idle_timer.cancel()
            cached.idle_timer = None
        if not cached.busy and time.monotonic() - cached.created >= SESSION_MAX_AGE_S:
            close_quietly(cached.socket, "connection_age_limit")
            _forget(session_id, account, cached)
        elif not cached.busy and _is_open(cached.socket):
            cached.busy = True
            return Lease(cached.socket, cached, True, _releaser(session_id, account, cached))
        elif cached.busy:
            socket = await connect(url, headers, timeout_s)
            return Lease(socket, None, False, lambda keep: close_quietly(socket))
        else:
            close_quietly(cached.socket)
            _forget(session_id, account, cached)
    socket = await connect(url, headers, timeout_s)
    entry = _Entry(socket, loop)
    _cache.setdefault(session_id, {})[account] = entry
    return Lease(socket, entry, False, _releaser(session_id, account, entry))


def _releaser(session_id: str, account: str, entry: _Entry) -> Callable[[bool], None]:
    def release(keep: bool) -> None:
        if not keep or not _is_open(entry.socket):
            if entry.idle_timer is not None:
                entry.idle_timer.cancel()
            close_quietly(entry.socket)
            _forget(session_id, account, entry)
            return
        entry.busy = False
        entry.idle_timer = entry.loop.call_later(SESSION_IDLE_TTL_S, _expire, session_id, account, entry)

    return release


def _expire(session_id: str, account: str, entry: _Entry) -> None:
    if entry.busy:
        return
    close_quietly(entry.socket, "idle_timeout")
    _forget(session_id, account, entry)


# --- continuation -----------------------------------------------------------------------------


def _without_input(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in ("input", "previous_response_id")}


def continued_body(entry: _Entry, body: dict[str, Any]) -> dict[str, Any]:
    """The body to send on ``entry``'s socket: only the new input after the socket's last answer
    when this request extends that exchange, else the whole body (and the memory is dropped)."""
    last = entry.continuation
    if last is None:
        return body
    baseline = [*(last.body.get("input") or ()), *last.items]
    current = body.get("input") or []
    if (
        _without_input(body) != _without_input(last.body)
        or len(current) < len(baseline)
        or current[: len(baseline)] != baseline
        or not last.response_id
    ):
        entry.continuation = None
        return body
    return {**body, "previous_response_id": last.response_id, "input": current[len(baseline) :]}


def count_request(session_id: str | None, sent: dict[str, Any], reused: bool, cached_context: bool) -> None:
    if not session_id:
        return
    counters = _stats_of(session_id)
    counters["requests"] += 1
    counters["connectionsReused" if reused else "connectionsCreated"] += 1
    counters["cachedContextRequests"] += int(cached_context)
    counters["storeTrueRequests"] += int(sent.get("store") is True)
    items = len(sent.get("input") or ())
    counters["lastInputItems"] = items
    if sent.get("previous_response_id"):
        counters["deltaRequests"] += 1
        counters["lastDeltaInputItems"] = items
        counters["lastPreviousResponseId"] = sent["previous_response_id"]
    else:
        counters["fullContextRequests"] += 1
        counters["lastDeltaInputItems"] = counters["lastPreviousResponseId"] = None


async def send(socket: Any, text: str) -> None:
    """Send one frame; a socket closed meanwhile is a :class:`WebSocketCloseError`."""
    from websockets.exceptions import ConnectionClosed

    try:
        await socket.send(text)
    except ConnectionClosed as exc:
        received = exc.rcvd
        raise WebSocketCloseError(
            received.code if received else 1006, received.reason if received else ""
        ) from None


# --- reading -------------------------------------------------------------------------------------


async def frames(socket: Any, idle_timeout_s: float | None) -> AsyncIterator[dict[str, Any]]:
    """The answer's events, decoded, up to and including its completion event. A close before
    it is a :class:`WebSocketCloseError`; a wait longer than ``idle_timeout_s`` closes the
    socket and fails."""
    from websockets.exceptions import ConnectionClosed

    while True:
        try:
            if idle_timeout_s:
                data = await asyncio.wait_for(socket.recv(), idle_timeout_s)
            else:
                data = await socket.recv()
        except TimeoutError:
            close_quietly(socket, "idle_timeout")
            raise WebSocketTransportError(
                f"WebSocket idle timeout after {int(idle_timeout_s * 1000)}ms"
            ) from None  # type: ignore[operator]
        except ConnectionClosed as exc:
            received = exc.rcvd
            raise WebSocketCloseError(
                received.code if received else 1006, received.reason if received else ""
            ) from None
        if not data:
            continue
        try:
            event = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise CodexProtocolError(f"Invalid Codex WebSocket JSON: {exc}") from None
        if not isinstance(event, dict):
            continue
        yield event
        if event.get("type") in COMPLETION_TYPES:
            return
