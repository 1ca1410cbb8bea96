"""HTTP for provider adapters: clients, SSE requests, provider-level retries, redirects, timeouts.

:func:`open_sse` sends one streaming request and yields an :class:`SSEResponse` whose
``batches()`` / ``events()`` iterate the server-sent events. Before any event is read it retries
429 / 5xx / overloaded answers and connection failures with exponential backoff, honouring
``Retry-After`` / ``retry-after-ms`` up to ``retry.provider.maxRetryDelayMs``; a non-2xx answer
that is not retried raises :class:`ProviderHTTPError` whose message is one clear line built from
the body (:mod:`pi_host.lib.llm.errors`), credentials redacted (:mod:`pi_host.lib.llm.redact`).
A longer requested delay is refused at once, and the error text says so in words the session's
auto-retry reads (:func:`pi_host.protocol.failures.server_delay_note`).

Redirects are followed here, not by httpx: httpx drops only ``Authorization`` on a cross-origin
redirect and would send ``x-api-key`` / ``x-goog-api-key`` (and the conversation) to the other
server. Same-origin redirects (and an ``http`` → ``https`` upgrade of the same host) are
followed with every header; a redirect to another origin is refused with one line.

Timeouts (``httpIdleTimeoutMs``, bounded by ``retry.provider.timeoutMs`` when set) are httpx's
*read* timeout: first while waiting for the response headers, then between body bytes (zero
per-event cost). Each ends in a :class:`ProviderTimeout` that says which wait ran out and how
long it was; 0 or ``"disabled"`` waits forever. Abort is handled by
:func:`pi_host.lib.llm.builder.guard`, which cancels the waiting read; ``open_sse`` closes the
readers it handed out and then the response in ``finally``, so cancellation anywhere is safe.

Options read from :class:`pi_host.protocol.StreamOptions` (all optional): ``retry`` (pi's
``retry.provider`` settings; provider-level retries default to 0), ``idle_timeout_ms``,
``api_key`` and ``secrets`` (redacted from error texts), ``client`` (an ``httpx.AsyncClient``
instead of the shared one) and the hook bridges: ``on_headers`` and ``on_payload`` through
:func:`run_request_hooks` (the adapter calls it before :func:`open_sse`), ``on_response`` inside
:func:`open_sse`, ``on_stream_event`` through :func:`stream_event_hook`.
"""

from __future__ import annotations

import asyncio
import email.utils
import inspect
import json
import math
import random
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pi_host.lib.llm._httpx_no_cli  # noqa: F401 (first: httpx without its command-line client)

# isort: split
import httpx
from httpx_sse import EventSource, ServerSentEvent

from pi_host.lib.llm.errors import (
    ProviderHTTPError,
    ProviderTimeout,
    describe_transport_error,
    error_text_from_body,
)
from pi_host.lib.llm.hooks import apply_payload_hook, run_request_hooks, stream_event_hook
from pi_host.lib.llm.redact import PATTERNS_ONLY, Redactor, header_secrets
from pi_host.protocol.abort import race
from pi_host.protocol.failures import server_delay_note

__all__ = [
    "ProviderHTTPError",
    "apply_payload_hook",
    "ProviderTimeout",
    "RetryPolicy",
    "SSEResponse",
    "create_client",
    "describe_transport_error",
    "error_text_from_body",
    "open_sse",
    "request_headers",
    "run_request_hooks",
    "shared_client",
    "stream_event_hook",
]

DEFAULT_IDLE_TIMEOUT_MS = 300_000
DEFAULT_CONNECT_TIMEOUT_S = 30.0
MAX_REDIRECTS = 5
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


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
            max_retry_delay_ms=int(60_000 if raw.get("maxRetryDelayMs") is None else raw["maxRetryDelayMs"]),
        )

    def refuses(self, delay_ms: float | None) -> bool:
        """Whether a server-requested delay is longer than this policy may wait."""
        return delay_ms is not None and bool(self.max_retry_delay_ms) and delay_ms > self.max_retry_delay_ms

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
    if "verify" not in kwargs:
        from pi_host.lib.llm.tls import client_tls_context

        kwargs["verify"] = client_tls_context()
    return httpx.AsyncClient(**kwargs)


def shared_client() -> httpx.AsyncClient:
    """One client per event loop: building a client (TLS context) costs milliseconds."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = _clients[loop] = create_client()
    return client


def timeout_setting_ms(value: Any) -> int | None:
    """A timeout setting as pi reads ``httpIdleTimeoutMs``: ms (a number, or a numeric string);
    ``0`` or ``"disabled"`` turn it off (both give 0); anything else is None (the default)."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "disabled":
            return 0
        try:
            value = float(text)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if math.isfinite(value) and value >= 0 else None


def idle_timeout(options: Any) -> tuple[float | None, str]:
    """``(seconds, setting)``: how long to wait for the response headers and then for each piece
    of the body (None: forever), and the setting that decided it. ``httpIdleTimeoutMs`` (None:
    300000, 0: off) and ``retry.provider.timeoutMs`` both bound it, as in pi."""
    idle = timeout_setting_ms(getattr(options, "idle_timeout_ms", None))
    limits: list[tuple[int, str]] = []
    idle = DEFAULT_IDLE_TIMEOUT_MS if idle is None else idle
    if idle > 0:
        limits.append((idle, "httpIdleTimeoutMs"))
    provider = timeout_setting_ms((getattr(options, "retry", None) or {}).get("timeoutMs"))
    if provider:
        limits.append((provider, "retry.provider.timeoutMs"))
    if not limits:
        return None, "httpIdleTimeoutMs"
    ms, setting = min(limits)
    return ms / 1000, setting


def idle_timeout_s(options: Any) -> float | None:
    return idle_timeout(options)[0]


def user_agent() -> str:
    """``pi-host/<version> (<platform>; python/<ver>; <arch>)``, sent by every provider adapter
    (pi sends ``pi/<version> (<platform>; node/<ver>; <arch>)``)."""
    import platform
    import sys

    from pi_host._version import __version__

    py = ".".join(map(str, sys.version_info[:3]))
    return f"pi-host/{__version__} ({sys.platform}; python/{py}; {platform.machine() or 'unknown'})"


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


# --- retries ------------------------------------------------------------------------------------


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


# --- requests (the hook helpers live in pi_host.lib.llm.hooks: no httpx there) -------------------------------------------------------------------------------


@dataclass
class SSEResponse:
    response: httpx.Response
    attempts: int = 1
    idle_s: float | None = None
    """The idle timeout in force (for the error text when it runs out)."""
    timeout_setting: str = "httpIdleTimeoutMs"
    redact: Redactor = PATTERNS_ONLY
    _readers: list[Any] = field(default_factory=list, repr=False)

    @property
    def status(self) -> int:
        return self.response.status_code

    @property
    def headers(self) -> httpx.Headers:
        return self.response.headers

    def events(self) -> AsyncIterator[ServerSentEvent]:
        """The server-sent events (comments and keep-alives are skipped by httpx-sse)."""
        return self._reader(self._events())

    def batches(self) -> AsyncIterator[list[tuple[bytes, bytes]]]:
        """Faster than :meth:`events`: lists of ``(event_name, data_bytes)``, one per network
        read (:func:`pi_host.lib.llm.sse.iter_batches`). A 2xx answer that is not an event stream
        raises :class:`ProviderHTTPError` with its body."""
        return self._reader(self._batches())

    def _reader(self, reader: Any) -> Any:
        # Closed by open_sse before the response, even when the adapter broke out of its loop.
        self._readers.append(reader)
        return reader

    def _idle(self, exc: BaseException) -> BaseException:
        if isinstance(exc, httpx.ReadTimeout) and self.idle_s is not None:
            return ProviderTimeout("stream", self.idle_s, self.timeout_setting)
        return exc

    async def _events(self) -> AsyncIterator[ServerSentEvent]:
        async with aclosing(EventSource(self.response).aiter_sse()) as events:
            try:
                async for event in events:
                    yield event
            except httpx.ReadTimeout as exc:
                raise self._idle(exc) from None

    async def _batches(self) -> AsyncIterator[list[tuple[bytes, bytes]]]:
        from pi_host.lib.llm.sse import iter_batches

        content_type = self.response.headers.get("content-type", "")
        if content_type and "text/event-stream" not in content_type:
            raw = (await self.response.aread()).decode("utf-8", "replace")
            detail = error_text_from_body(self.status, raw, redact=self.redact)
            raise ProviderHTTPError(
                self.status,
                f"Expected a server-sent event stream, got {content_type}: {detail}",
                self.redact(raw),
            )
        async with aclosing(iter_batches(self.response)) as batches:
            try:
                async for batch in batches:
                    yield batch
            except httpx.ReadTimeout as exc:
                raise self._idle(exc) from None

    async def aclose(self) -> None:
        """Close the readers handed out (innermost generators first), then the response."""
        for reader in reversed(self._readers):
            if not reader.ag_running:
                await reader.aclose()
        await self.response.aclose()


def _origin(url: httpx.URL) -> str:
    port = url.port
    return f"{url.scheme}://{url.host}" + (f":{port}" if port else "")


def _same_origin(url: httpx.URL, target: httpx.URL) -> bool:
    """The same scheme, host and port, or an upgrade of ``http`` to ``https`` on the same host."""
    defaults = {"http": 80, "https": 443}
    here = url.port or defaults.get(url.scheme)
    there = target.port or defaults.get(target.scheme)
    if url.host != target.host:
        return False
    if url.scheme == target.scheme:
        return here == there
    return (url.scheme, here, target.scheme, there) == ("http", 80, "https", 443)


async def _send(client: httpx.AsyncClient, request: httpx.Request, redact: Redactor) -> httpx.Response:
    """Send ``request``, following same-origin redirects (every header kept) and refusing any
    other: credentials, and the conversation in the body, stay with the configured server."""
    response = await client.send(request, stream=True, follow_redirects=False)
    hops = 0
    while response.has_redirect_location and response.next_request is not None:
        target = response.next_request
        status = response.status_code
        await response.aclose()
        if not _same_origin(request.url, target.url):
            raise ProviderHTTPError(
                status,
                redact(
                    f"{status} redirect refused: {_origin(request.url)} sent the request on to "
                    f"{_origin(target.url)}, another server, and API keys go only to the configured "
                    "baseUrl (point baseUrl at the new address if you trust it)"
                ),
            )
        hops += 1
        if hops > MAX_REDIRECTS:
            raise ProviderHTTPError(status, f"{status} too many redirects (more than {MAX_REDIRECTS})")
        request = target
        response = await client.send(request, stream=True, follow_redirects=False)
    return response


async def _error_from(
    response: httpx.Response, policy: RetryPolicy, attempt: int, redact: Redactor
) -> ProviderHTTPError:
    """The error of a >= 400 answer (its body read, the response closed); a server-requested
    delay is noted in its text when nothing here will wait for it."""
    try:
        raw = (await response.aread()).decode("utf-8", "replace")
    except httpx.HTTPError:
        raw = ""
    finally:
        await response.aclose()
    status = response.status_code
    text = error_text_from_body(status, raw, response.reason_phrase, redact)
    delay_ms = _retry_after_ms(response.headers) if is_retryable_status(status, raw) else None
    if policy.refuses(delay_ms):
        text = f"{text} {server_delay_note(delay_ms, policy.max_retry_delay_ms)}"  # type: ignore[arg-type]
    elif delay_ms is not None and attempt > policy.max_retries:
        text = f"{text} {server_delay_note(delay_ms)}"
    return ProviderHTTPError(status, text, redact(raw), dict(response.headers), delay_ms)


async def _notify(on_response: Any, response: httpx.Response) -> None:
    if on_response is not None:
        result = on_response(response.status_code, dict(response.headers))
        if inspect.isawaitable(result):
            await result


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
    redact = Redactor.from_options(options, header_secrets(send_headers))
    on_response = getattr(options, "on_response", None)
    idle, setting = idle_timeout(options)
    timeout = httpx.Timeout(DEFAULT_CONNECT_TIMEOUT_S, read=idle)
    attempt = 0
    while True:
        attempt += 1
        request = client.build_request(method, url, content=content, headers=send_headers, timeout=timeout)
        failure: BaseException | None = None
        response: httpx.Response | None = None
        try:
            response = await _send(client, request, redact)
        except httpx.ReadTimeout:
            # Nothing came back, so nothing was streamed: as safe to retry as a refused connection.
            failure = ProviderTimeout("response", idle or 0, setting)
        except (httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError, httpx.ConnectTimeout) as exc:
            failure = exc
        if response is not None:
            try:
                await _notify(on_response, response)
            except BaseException:
                await response.aclose()
                raise
            if response.status_code >= 400:
                failure = await _error_from(response, policy, attempt, redact)
                if not is_retryable_status(failure.status, failure.body) or policy.refuses(
                    failure.retry_after_ms
                ):
                    raise failure
                response = None
        if response is not None:
            stream = SSEResponse(response, attempt, idle, setting, redact)
            try:
                yield stream
            finally:
                await stream.aclose()
            return
        assert failure is not None
        if attempt > policy.max_retries:
            raise failure
        delay_ms = getattr(failure, "retry_after_ms", None)
        wait_ms = delay_ms if delay_ms is not None else policy.backoff_ms(attempt)
        if on_retry is not None:
            result = on_retry(attempt, wait_ms, describe_transport_error(failure, redact))
            if inspect.isawaitable(result):
                await result
        await race(signal, asyncio.sleep(wait_ms / 1000))
