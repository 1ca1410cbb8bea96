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
from typing import Any

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


_CLASS_NAME = object()
_TRANSPORT_WORDS: tuple[tuple[tuple[str, ...], str, Any], ...] = (
    # (exception class names, the words, then the error's text, or this when it has none; None:
    # the words alone)
    (("ReadTimeout",), "Request timed out: no data received from the provider (idle timeout)", None),
    (("TimeoutException", "ConnectTimeout"), "Request timed out: ", _CLASS_NAME),
    (("ConnectError",), "Connection error: ", "could not connect"),
    (("RemoteProtocolError",), "Connection lost: ", ""),
    (("ReadError", "WriteError", "NetworkError"), "Network error: ", _CLASS_NAME),
)
"""The words of a transport failure, first match first (a read timeout is a timeout too)."""


def describe_transport_error(exc: BaseException, redact: Redactor = PATTERNS_ONLY) -> str:
    """One line for a failure while connecting or streaming."""
    return redact(_describe(exc))


def _describe(exc: BaseException) -> str:
    if isinstance(exc, (ProviderHTTPError, ProviderTimeout)):
        return str(exc)
    # httpx's errors and pi_host.lib.llm.wire's (named alike) are told in the same words. Either
    # module is looked up, not imported: a run that made no request of that kind never loads it.
    for module_name, base in (("httpx", "HTTPError"), ("pi_host.lib.llm.wire", "TransportError")):
        module = sys.modules.get(module_name)
        if module is None or not isinstance(exc, getattr(module, base)):
            continue
        for names, words, when_empty in _TRANSPORT_WORDS:
            if any(isinstance(exc, kind) for name in names if (kind := getattr(module, name, None))):
                if when_empty is None:
                    return words
                return words + (str(exc) or (type(exc).__name__ if when_empty is _CLASS_NAME else when_empty))
    if isinstance(exc, ValueError) and "JSON" in type(exc).__name__ + str(exc):
        return f"Malformed stream data: {exc}"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
