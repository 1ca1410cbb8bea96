"""HTTP for provider adapters: clients, SSE requests, provider-level retries, redirects, timeouts.

:func:`open_sse` sends one streaming request and yields an :class:`SSEResponse` whose
``batches()`` / ``events()`` iterate the server-sent events. Before any event is read it retries
429 / 5xx / overloaded answers and connection failures with exponential backoff, honouring
``Retry-After`` / ``retry-after-ms`` up to ``retry.provider.maxRetryDelayMs``; a non-2xx answer
that is not retried raises :class:`ProviderHTTPError` whose message is one clear line built from
the body (:mod:`pi_host.lib.llm.errors`), credentials redacted (:mod:`pi_host.lib.llm.redact`).
A longer requested delay is refused at once, and the error text says so in words the session's
auto-retry reads (:func:`pi_host.protocol.failures.server_delay_note`).

Requests go over :mod:`pi_host.lib.llm.wire` (asyncio and h11, no httpx import) unless the
caller hands in an ``httpx.AsyncClient``, a proxy is set in the environment, or the URL is one
``wire`` does not take; then over httpx. Both give the same errors, timeouts and redirects.

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
import inspect
import json
import math
import sys
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from pi_host.lib.llm import wire
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

if TYPE_CHECKING:
    import httpx
    from httpx_sse import ServerSentEvent

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
    """How a provider request is retried: how many times and how long to wait between tries."""

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
        import random  # only a retry waits

        return delay * (1 + random.random() * 0.1)


# --- clients ------------------------------------------------------------------------------------


def _httpx() -> Any:
    """httpx, imported on first need (most runs never need it: :mod:`pi_host.lib.llm.wire`)."""
    import pi_host.lib.llm._httpx_no_cli  # noqa: F401 (first: httpx without its command-line client)

    # isort: split
    import httpx

    return httpx


def _httpx_errors(*names: str) -> tuple[type[BaseException], ...]:
    """httpx's exception classes of these names, or none when httpx was never imported (then
    nothing can have raised them)."""
    module = sys.modules.get("httpx")
    return tuple(getattr(module, name) for name in names) if module is not None else ()


def _read_timeouts() -> tuple[type[BaseException], ...]:
    return (wire.ReadTimeout, *_httpx_errors("ReadTimeout"))


_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
    weakref.WeakKeyDictionary()
)


def create_client(**kwargs: Any) -> httpx.AsyncClient:
    """A new AsyncClient with pi-host defaults (no overall timeout; reads bounded per request)."""
    httpx = _httpx()
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
    value removes the header. A value that came from ``$VAR`` or ``!command`` joins
    ``options.secrets``, so error texts echoing it are redacted (literal ones are listed by the
    catalog already, and a command must not run twice)."""
    from pi_host.config.credentials import resolve_config_value, secret_values

    headers = {name.lower(): value for name, value in (base or {}).items()}
    secrets = getattr(options, "secrets", None)
    for source, resolve in (
        (getattr(model, "headers", None), True),
        (getattr(options, "headers", None), False),
    ):
        for name, value in (source or {}).items():
            if value is not None and resolve:
                raw, value = value, resolve_config_value(value)
                if value is None:
                    continue
                if value != raw and isinstance(secrets, list) and value not in secrets:
                    secrets.extend(secret_values(value))
            if value is None:
                headers.pop(name.lower(), None)
            else:
                headers[name.lower()] = value
    return headers


# --- retries ------------------------------------------------------------------------------------


def _retry_after_ms(headers: Any) -> float | None:
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
    import email.utils

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
    """A streaming answer that started: the response, how many tries it took, its idle timeout."""

    response: Any
    """The answer: a :class:`pi_host.lib.llm.wire.Response`, or an ``httpx.Response`` when the
    request went through httpx (both have ``status_code``, ``headers``, ``aiter_bytes()``...)."""
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
    def headers(self) -> Any:
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
        if isinstance(exc, _read_timeouts()) and self.idle_s is not None:
            return ProviderTimeout("stream", self.idle_s, self.timeout_setting)
        return exc

    async def _events(self) -> AsyncIterator[ServerSentEvent]:
        from httpx_sse import EventSource

        async with aclosing(EventSource(self.response).aiter_sse()) as events:
            try:
                async for event in events:
                    yield event
            except _read_timeouts() as exc:
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
            except _read_timeouts() as exc:
                raise self._idle(exc) from None

    async def aclose(self) -> None:
        """Close the readers handed out (innermost generators first), then the response."""
        for reader in reversed(self._readers):
            if not reader.ag_running:
                await reader.aclose()
        await self.response.aclose()


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(url: str) -> str:
    parts = urlsplit(url)
    port = parts.port if parts.port != _DEFAULT_PORTS.get(parts.scheme) else None
    return f"{parts.scheme}://{parts.hostname}" + (f":{port}" if port else "")


def _same_origin(url: str, target: str) -> bool:
    """The same scheme, host and port, or an upgrade of ``http`` to ``https`` on the same host."""
    here, there = urlsplit(url), urlsplit(target)
    if here.hostname != there.hostname:
        return False
    here_port = here.port or _DEFAULT_PORTS.get(here.scheme)
    there_port = there.port or _DEFAULT_PORTS.get(there.scheme)
    if here.scheme == there.scheme:
        return here_port == there_port
    return (here.scheme, here_port, there.scheme, there_port) == ("http", 80, "https", 443)


@dataclass
class _Request:
    """One request as both transports send it."""

    method: str
    url: str
    headers: dict[str, str]
    content: bytes
    read_timeout: float | None

    def redirected(self, status: int, location: str) -> _Request:
        """The request a redirect asks for: 303 (and 301/302 after a POST) become a GET without
        a body, as browsers and httpx do; 307/308 repeat it as it was."""
        method = self.method
        if (status == 303 and method != "HEAD") or (status in (301, 302) and method == "POST"):
            method = "GET"
        if method == self.method:
            return _Request(method, location, self.headers, self.content, self.read_timeout)
        headers = {
            k: v for k, v in self.headers.items() if k.lower() not in ("content-length", "transfer-encoding")
        }
        return _Request(method, location, headers, b"", self.read_timeout)


async def _send_once(client: Any, request: _Request) -> Any:
    if isinstance(client, wire.Pool):
        return await client.send(
            request.method, request.url, request.headers, request.content,
            connect_timeout=DEFAULT_CONNECT_TIMEOUT_S, read_timeout=request.read_timeout,
        )  # fmt: skip
    timeout = _httpx().Timeout(DEFAULT_CONNECT_TIMEOUT_S, read=request.read_timeout)
    content = request.content if request.content or request.method != "GET" else None
    built = client.build_request(
        request.method, request.url, content=content, headers=request.headers, timeout=timeout
    )
    return await client.send(built, stream=True, follow_redirects=False)


async def _send(client: Any, request: _Request, redact: Redactor) -> Any:
    """Send ``request``, following same-origin redirects (every header kept) and refusing any
    other: credentials, and the conversation in the body, stay with the configured server."""
    response = await _send_once(client, request)
    hops = 0
    while response.has_redirect_location:
        status = response.status_code
        target = urljoin(request.url, response.headers["location"])
        await response.aclose()
        if not _same_origin(request.url, target):
            raise ProviderHTTPError(
                status,
                redact(
                    f"{status} redirect refused: {_origin(request.url)} sent the request on to "
                    f"{_origin(target)}, another server, and API keys go only to the configured "
                    "baseUrl (point baseUrl at the new address if you trust it)"
                ),
            )
        hops += 1
        if hops > MAX_REDIRECTS:
            raise ProviderHTTPError(status, f"{status} too many redirects (more than {MAX_REDIRECTS})")
        request = request.redirected(status, target)
        response = await _send_once(client, request)
    return response


async def _error_from(
    response: Any, policy: RetryPolicy, attempt: int, redact: Redactor
) -> ProviderHTTPError:
    """The error of a >= 400 answer (its body read, the response closed); a server-requested
    delay is noted in its text when nothing here will wait for it."""
    try:
        raw = (await response.aread()).decode("utf-8", "replace")
    except (wire.TransportError, *_httpx_errors("HTTPError")):
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


async def _notify(on_response: Any, response: Any) -> None:
    if on_response is not None:
        result = on_response(response.status_code, dict(response.headers))
        if inspect.isawaitable(result):
            await result


def _retryable_send_errors() -> tuple[type[BaseException], ...]:
    """Failures before any answer arrived: safe to send again."""
    return (
        wire.ConnectError, wire.ConnectTimeout, wire.ReadError, wire.WriteError, wire.RemoteProtocolError,
        *_httpx_errors("ConnectError", "ReadError", "RemoteProtocolError", "ConnectTimeout"),
    )  # fmt: skip


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
    transport: Any = client or getattr(options, "client", None)
    if transport is None:
        transport = wire.shared_pool() if wire.can_send(url) else shared_client()
    policy = policy or RetryPolicy.from_options(options)
    signal = getattr(options, "signal", None)
    content = body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False).encode()
    send_headers = {"content-type": "application/json", "accept": "text/event-stream", **headers}
    send_headers = {k: v for k, v in send_headers.items() if v is not None}
    if isinstance(transport, wire.Pool) and not any(k.lower() == "user-agent" for k in send_headers):
        send_headers["user-agent"] = user_agent()  # httpx would send its own
    redact = Redactor.from_options(options, header_secrets(send_headers))
    on_response = getattr(options, "on_response", None)
    idle, setting = idle_timeout(options)
    attempt = 0
    while True:
        attempt += 1
        request = _Request(method, url, send_headers, content, idle)
        failure: BaseException | None = None
        response: Any = None
        try:
            response = await _send(transport, request, redact)
        except _read_timeouts():
            # Nothing came back, so nothing was streamed: as safe to retry as a refused connection.
            failure = ProviderTimeout("response", idle or 0, setting)
        except _retryable_send_errors() as exc:
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
