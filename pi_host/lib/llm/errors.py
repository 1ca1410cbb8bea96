"""One readable line for every way a provider request fails, with credentials redacted.

:class:`ProviderHTTPError` is a non-success answer (its message built by
:func:`error_text_from_body`), :class:`ProviderTimeout` says which wait ran out (the response
headers, or the next bytes of the stream) and for how long; :func:`describe_transport_error` turns
anything raised while connecting or streaming into the line that becomes the assistant's
``errorMessage``. Each takes a :class:`~pi_host.lib.llm.redact.Redactor`; without one, token-shaped
strings are still replaced.
"""

from __future__ import annotations

import json
import sys

from pi_host.lib.llm.redact import PATTERNS_ONLY, Redactor


class ProviderHTTPError(Exception):
    """A non-success HTTP answer, already turned into one readable line."""

    def __init__(
        self,
        status: int,
        message: str,
        body: str = "",
        headers: dict[str, str] | None = None,
        retry_after_ms: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
        self.headers = headers or {}
        self.retry_after_ms = retry_after_ms


class ProviderTimeout(Exception):
    """A wait that ran out: ``"response"`` (no headers yet) or ``"stream"`` (no more bytes)."""

    def __init__(self, phase: str, seconds: float, setting: str = "httpIdleTimeoutMs") -> None:
        self.phase = phase
        self.seconds = seconds
        if phase == "response":
            text = f"no response from the provider within {seconds:g}s ({setting})"
        else:
            text = f"the stream sent no data for {seconds:g}s (idle timeout, {setting})"
        super().__init__(f"Request timed out: {text}")


def error_text_from_body(status: int, body: str, reason: str = "", redact: Redactor = PATTERNS_ONLY) -> str:
    """``"<status> <type>: <message>"`` from a JSON error body, else the body or the reason."""
    return redact(_error_text(status, body))


def _error_text(status: int, body: str) -> str:
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


def describe_transport_error(exc: BaseException, redact: Redactor = PATTERNS_ONLY) -> str:
    """One line for a failure while connecting or streaming."""
    return redact(_describe(exc))


def _describe(exc: BaseException) -> str:
    if isinstance(exc, (ProviderHTTPError, ProviderTimeout)):
        return str(exc)
    # An httpx error needs httpx loaded; providers that make no HTTP request never import it.
    httpx = sys.modules.get("httpx")
    if httpx is not None and isinstance(exc, httpx.HTTPError):
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
    wire = sys.modules.get("pi_host.lib.llm.wire")  # the same words for its errors
    if wire is not None and isinstance(exc, wire.TransportError):
        if isinstance(exc, wire.ReadTimeout):
            return "Request timed out: no data received from the provider (idle timeout)"
        if isinstance(exc, wire.ConnectTimeout):
            return f"Request timed out: {exc}"
        if isinstance(exc, wire.ConnectError):
            return f"Connection error: {exc or 'could not connect'}"
        if isinstance(exc, wire.RemoteProtocolError):
            return f"Connection lost: {exc}"
        return f"Network error: {exc or type(exc).__name__}"
    if isinstance(exc, ValueError) and "JSON" in type(exc).__name__ + str(exc):
        return f"Malformed stream data: {exc}"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
