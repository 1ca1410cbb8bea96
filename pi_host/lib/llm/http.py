"""HTTP for provider adapters: clients, SSE requests, provider-level retries, error text.

:func:`open_sse` sends one streaming request and yields an :class:`SSEResponse` whose
``events()`` iterates the server-sent events (httpx-sse). Before any event is read it retries
429 / 5xx / overloaded answers and connection failures with exponential backoff, honouring
``Retry-After`` / ``retry-after-ms``; a non-2xx answer that is not retried raises
:class:`ProviderHTTPError` whose message is one clear line built from the body.

The idle timeout is httpx's *read* timeout: no bytes for that long ends the stream with
:class:`httpx.ReadTimeout` (zero per-event cost). Abort is handled by
:func:`pi_host.lib.llm.builder.guard`, which cancels the waiting read; ``open_sse`` closes the
response in ``finally``, so cancellation anywhere is safe.

Options read from :class:`pi_host.protocol.StreamOptions` (all optional): ``retry`` (pi's
``retry.provider`` settings; provider-level retries default to 0), ``idle_timeout_ms`` (default
300000), ``client`` (an ``httpx.AsyncClient`` instead of the shared one) and the hook bridges:
``on_headers`` and ``on_payload`` through :func:`run_request_hooks` (the adapter calls it before
:func:`open_sse`), ``on_response`` inside :func:`open_sse`, ``on_stream_event`` through
:func:`stream_event_hook`.
"""

from __future__ import annotations

import asyncio
import email.utils
import inspect
import json
import random
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from httpx_sse import EventSource, ServerSentEvent

from pi_host.protocol.abort import race

DEFAULT_IDLE_TIMEOUT_MS = 300_000
DEFAULT_CONNECT_TIMEOUT_S = 30.0
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


class ProviderHTTPError(Exception):
    """A non-success HTTP answer, already turned into one readable line."""

    def __init__(
        self, status: int, message: str, body: str = "", headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
        self.headers = headers or {}


@dataclass
class RetryPolicy:
    max_retries: int = 0
    base_delay_ms: int = 1000
    max_retry_delay_ms: int = 60_000
    """Upper bound for a server-requested delay (0 = no cap); longer requests are not retried."""

    @classmethod
    def from_options(cls, options: Any) -> RetryPolicy:
        raw = getattr(options, "retry", None) or {}
        return cls(
            max_retries=int(raw.get("maxRetries", 0) or 0),
            base_delay_ms=int(raw.get("baseDelayMs", 1000) or 0),
            max_retry_delay_ms=int(raw.get("maxRetryDelayMs", 60_000) or 0),
        )

    def backoff_ms(self, attempt: int) -> float:
        """Delay before retry ``attempt`` (1-based): base × 2^(attempt-1), with a little jitter."""
        delay = self.base_delay_ms * (2 ** (attempt - 1))
        if self.max_retry_delay_ms:
            delay = min(delay, self.max_retry_delay_ms)
        return delay * (1 + random.random() * 0.1)


# --- clients ------------------------------------------------------------------------------------

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
    weakref.WeakKeyDictionary()
)


def create_client(**kwargs: Any) -> httpx.AsyncClient:
    """A new AsyncClient with pi-host defaults (no overall timeout; reads bounded per request)."""
    kwargs.setdefault(
        "timeout", httpx.Timeout(DEFAULT_CONNECT_TIMEOUT_S, read=DEFAULT_IDLE_TIMEOUT_MS / 1000)
    )
    kwargs.setdefault("follow_redirects", True)
    kwargs.setdefault("limits", httpx.Limits(max_connections=64, max_keepalive_connections=16))
    return httpx.AsyncClient(**kwargs)


def shared_client() -> httpx.AsyncClient:
    """One client per event loop: building a client (TLS context) costs milliseconds."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = _clients[loop] = create_client()
    return client


def idle_timeout_s(options: Any) -> float:
    value = (
        getattr(options, "idle_timeout_ms", None)
        or (getattr(options, "retry", None) or {}).get("timeoutMs")
        or DEFAULT_IDLE_TIMEOUT_MS
    )
    return float(value) / 1000


def request_headers(model: Any, options: Any, base: dict[str, str] | None = None) -> dict[str, str]:
    """The headers of one request: ``base`` (the API's own and the key header), then the model's
    configured ``headers`` (config values resolved: ``$VAR``, ``!command``; unresolved ones left
    out), then ``StreamOptions.headers``. Names are lower-cased, later sources win, and a None
    value removes the header."""
    from pi_host.config.credentials import resolve_config_value

    headers = {name.lower(): value for name, value in (base or {}).items()}
    for source, resolve in (
        (getattr(model, "headers", None), True),
        (getattr(options, "headers", None), False),
    ):
        for name, value in (source or {}).items():
            if value is not None and resolve:
                value = resolve_config_value(value)
                if value is None:
                    continue
            if value is None:
                headers.pop(name.lower(), None)
            else:
                headers[name.lower()] = value
    return headers


# --- error text ---------------------------------------------------------------------------------


def error_text_from_body(status: int, body: str, reason: str = "") -> str:
    """``"<status> <type>: <message>"`` from a JSON error body, else the body or the reason."""
    text = body.strip()
    if not text:
        return f"{status} status code (no body)"
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, list) and data and isinstance(data[0], dict):
        data = data[0]  # Google sometimes wraps the error in a list
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            message = err.get("message") or err.get("msg") or err.get("detail")
            kind = err.get("type") or err.get("code") or err.get("status")
            if message:
                return f"{status} {kind}: {message}" if kind else f"{status} {message}"
        elif isinstance(err, str):
            return f"{status} {err}"
        if isinstance(data.get("message"), str):
            return f"{status} {data['message']}"
        if isinstance(data.get("detail"), str):
            return f"{status} {data['detail']}"
    one_line = " ".join(text.split())
    if len(one_line) > 500:
        one_line = one_line[:500] + "…"
    return f"{status} {one_line}"


def describe_transport_error(exc: BaseException) -> str:
    """One line for a failure while connecting or streaming."""
    if isinstance(exc, ProviderHTTPError):
        return str(exc)
    if isinstance(exc, httpx.ReadTimeout):
        return "Request timed out: no data received from the provider (idle timeout)"
    if isinstance(exc, httpx.TimeoutException):
        return f"Request timed out: {exc or type(exc).__name__}"
    if isinstance(exc, httpx.ConnectError):
        return f"Connection error: {exc or 'could not connect'}"
    if isinstance(exc, httpx.RemoteProtocolError):
        return f"Connection lost: {exc}"
    if isinstance(exc, (httpx.ReadError, httpx.WriteError, httpx.NetworkError)):
        return f"Network error: {exc or type(exc).__name__}"
    if isinstance(exc, ValueError) and "JSON" in type(exc).__name__ + str(exc):
        return f"Malformed stream data: {exc}"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _retry_after_ms(headers: httpx.Headers) -> float | None:
    value = headers.get("retry-after-ms")
    if value:
        try:
            return float(value)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value) * 1000
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when.timestamp() - time.time()) * 1000)


def is_retryable_status(status: int, body: str = "") -> bool:
    if status in RETRY_STATUSES or status >= 500:
        return True
    return "overloaded" in body.lower()


# --- requests -----------------------------------------------------------------------------------


async def apply_payload_hook(options: Any, body: dict[str, Any]) -> dict[str, Any]:
    """Run ``options.on_payload`` (sync or async); a non-None return replaces the body."""
    hook = getattr(options, "on_payload", None)
    if hook is None:
        return body
    result = hook(body)
    if inspect.isawaitable(result):
        result = await result
    return body if result is None else result


async def run_request_hooks(options: Any, body: dict[str, Any], headers: dict[str, Any]) -> dict[str, Any]:
    """The hooks of one request, in pi's order: ``options.on_headers`` changes ``headers`` in
    place (a value set to None drops that header), then ``options.on_payload`` may replace the
    body, which is returned. Call it once per request, before :func:`open_sse`."""
    on_headers = getattr(options, "on_headers", None)
    if on_headers is not None:
        result = on_headers(headers)
        if inspect.isawaitable(result):
            await result
    return await apply_payload_hook(options, body)


def stream_event_hook(options: Any) -> Callable[[Any], Awaitable[None]] | None:
    """``options.on_stream_event`` (the ``provider_stream_event`` bridge) as an awaitable
    ``emit(data)`` for the adapter to call with each decoded stream chunk, or None when nobody
    listens (adapters then skip the call: it sits on the per-delta path)."""
    callback = getattr(options, "on_stream_event", None)
    if callback is None:
        return None

    async def emit(data: Any) -> None:
        result = callback(data)
        if inspect.isawaitable(result):
            await result

    return emit


@dataclass
class SSEResponse:
    response: httpx.Response
    attempts: int = 1

    @property
    def status(self) -> int:
        return self.response.status_code

    @property
    def headers(self) -> httpx.Headers:
        return self.response.headers

    def events(self) -> AsyncIterator[ServerSentEvent]:
        """The server-sent events (comments and keep-alives are skipped by httpx-sse)."""
        return EventSource(self.response).aiter_sse()

    async def batches(self) -> AsyncIterator[list[tuple[bytes, bytes]]]:
        """Faster than :meth:`events`: lists of ``(event_name, data_bytes)``, one per network
        read (:func:`pi_host.lib.llm.sse.iter_batches`). A 2xx answer that is not an event stream
        raises :class:`ProviderHTTPError` with its body."""
        from pi_host.lib.llm.sse import iter_batches

        content_type = self.response.headers.get("content-type", "")
        if content_type and "text/event-stream" not in content_type:
            raw = (await self.response.aread()).decode("utf-8", "replace")
            detail = error_text_from_body(self.status, raw)
            raise ProviderHTTPError(
                self.status, f"Expected a server-sent event stream, got {content_type}: {detail}", raw
            )
        async for batch in iter_batches(self.response):
            yield batch


@asynccontextmanager
async def open_sse(
    url: str,
    *,
    body: dict[str, Any] | bytes,
    headers: dict[str, str],
    options: Any,
    method: str = "POST",
    client: httpx.AsyncClient | None = None,
    policy: RetryPolicy | None = None,
    on_retry: Callable[[int, float, str], Awaitable[None] | None] | None = None,
) -> AsyncIterator[SSEResponse]:
    """Send a streaming request and yield the open response (closed on exit, always)."""
    client = client or getattr(options, "client", None) or shared_client()
    policy = policy or RetryPolicy.from_options(options)
    signal = getattr(options, "signal", None)
    content = body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False).encode()
    send_headers = {"content-type": "application/json", "accept": "text/event-stream", **headers}
    send_headers = {k: v for k, v in send_headers.items() if v is not None}
    on_response = getattr(options, "on_response", None)
    idle = idle_timeout_s(options)
    timeout = httpx.Timeout(DEFAULT_CONNECT_TIMEOUT_S, read=idle)
    attempt = 0
    while True:
        attempt += 1
        request = client.build_request(method, url, content=content, headers=send_headers, timeout=timeout)
        failure: BaseException | None = None
        delay_ms: float | None = None
        response: httpx.Response | None = None
        try:
            response = await client.send(request, stream=True)
            if on_response is not None:
                result = on_response(response.status_code, dict(response.headers))
                if inspect.isawaitable(result):
                    await result
        except (httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError, httpx.ConnectTimeout) as exc:
            failure = exc
        if response is not None and response.status_code >= 400:
            try:
                raw = (await response.aread()).decode("utf-8", "replace")
            except httpx.HTTPError:
                raw = ""
            finally:
                await response.aclose()
            failure = ProviderHTTPError(
                response.status_code,
                error_text_from_body(response.status_code, raw, response.reason_phrase),
                raw,
                dict(response.headers),
            )
            if not is_retryable_status(response.status_code, raw):
                raise failure
            delay_ms = _retry_after_ms(response.headers)
            response = None
        if response is not None:
            try:
                yield SSEResponse(response, attempt)
            finally:
                await response.aclose()
            return
        assert failure is not None
        if attempt > policy.max_retries:
            raise failure
        if delay_ms is not None and policy.max_retry_delay_ms and delay_ms > policy.max_retry_delay_ms:
            raise ProviderHTTPError(
                getattr(failure, "status", 0),
                f"{failure} (server asked to retry in {delay_ms / 1000:.0f}s, more than the "
                f"{policy.max_retry_delay_ms / 1000:.0f}s limit)",
            )
        wait_ms = delay_ms if delay_ms is not None else policy.backoff_ms(attempt)
        if on_retry is not None:
            result = on_retry(attempt, wait_ms, describe_transport_error(failure))
            if inspect.isawaitable(result):
                await result
        await race(signal, asyncio.sleep(wait_ms / 1000))
