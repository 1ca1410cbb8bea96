"""Classifying failed responses: context overflow (reference §3.9) and transient errors (§3.8).

:func:`is_context_overflow` decides whether compaction could help; :func:`is_retryable_error`
decides whether the session's auto-retry should try the same request again. An overflow is never
retryable as-is. A delay the server asked for is written into the error text by
:func:`server_delay_note` and read back by :func:`server_retry_delay_ms`.
"""

from __future__ import annotations

import math
import re
from functools import cache
from typing import Any

_I = re.IGNORECASE


@cache  # compiled on first use: searched only after a failed request (~5 ms of each start-up)
def _re(pattern: str, flags: int = _I) -> re.Pattern[str]:
    return re.compile(pattern, flags)


_OVERFLOW = "|".join(
    [
        r"prompt (is )?too long",
        r"prompt exceeds max length",
        r"request_too_large",
        r"input is too long for requested model",
        r"exceeds the context window",
        r"exceeds (the )?(model'?s )?maximum context length",
        r"context window exceeded",
        r"input token count.*exceeds the maximum",
        r"maximum prompt length is \d+",
        r"reduce the length of the messages",
        r"maximum context length is \d+ tokens",
        r"exceeds (the )?maximum allowed input length of \d+ tokens",
        r"input \(\d+ tokens\) is longer than the model'?s context length",
        r"exceeds the limit of \d+",
        r"exceeds the available context size",
        r"greater than the context length",
        r"context window exceeds limit",
        r"exceeded model token limit",
        r"too large for model with \d+ maximum context length",
        r"prompt has \d+ tokens, but the configured context size is \d+ tokens",
        r"model_context_window_exceeded",
        r"prompt too long; exceeded (max )?context length",
        r"range of input length should be",
        r"context[_ ]length[_ ]exceeded",
        r"too many tokens",
        r"token limit exceeded",
        r"^\s*413\b",
    ]
)
_CEREBRAS = r"^\s*4(00|13) (status code )?\(no body\)"
_NOT_OVERFLOW = r"rate limit|too many requests|^\s*(Throttling error:|Service unavailable:)"


def _get(message: Any, name: str, alias: str) -> Any:
    if isinstance(message, dict):
        return message.get(alias, message.get(name))
    return getattr(message, name, None)


def overflow_text(error_message: str, provider: str | None = None) -> bool:
    """True when an error text says the prompt did not fit the context window."""
    if not error_message or _re(_NOT_OVERFLOW).search(error_message):
        return False
    if _re(_OVERFLOW).search(error_message):
        return True
    return provider == "cerebras" and bool(_re(_CEREBRAS).search(error_message))


def is_context_overflow(message: Any, context_window: int | None = None) -> bool:
    """Reference §3.9: an error naming an overflow, or a silent overflow visible in the usage."""
    stop = _get(message, "stop_reason", "stopReason")
    if stop == "error":
        return overflow_text(
            _get(message, "error_message", "errorMessage") or "", _get(message, "provider", "provider")
        )
    if not context_window:
        return False
    usage = _get(message, "usage", "usage")
    if usage is None:
        return False
    prompt = (_get(usage, "input", "input") or 0) + (_get(usage, "cache_read", "cacheRead") or 0)
    if stop == "stop":
        return prompt > context_window
    if stop == "length":
        return (_get(usage, "output", "output") or 0) == 0 and prompt >= 0.99 * context_window
    return False


def is_recoverable_length_stop(message: Any, model: Any) -> bool:
    """A ``length`` stop that produced fewer tokens than the model's cap (reference §3.9)."""
    usage = _get(message, "usage", "usage")
    output = (_get(usage, "output", "output") or 0) if usage is not None else 0
    return _get(message, "stop_reason", "stopReason") == "length" and output < getattr(model, "max_tokens", 0)


_TRANSIENT = "|".join(
    [
        r"overloaded",
        r"server_busy",
        r"server (is )?busy",
        r"high demand",
        r"at capacity",
        r"over capacity",
        r"rate.?limit",
        r"too many requests",
        r"(?<![\d.])(429|500|502|503|504|520|524)(?![\d.])",
        r"service (temporarily )?unavailable",
        r"server.?error",
        r"internal.?error",
        r"provider returned (an )?error",
        r"upstream",
        r"relay",
        r"bad gateway",
        r"network.?error",
        r"connection.?(error|refused|lost|closed|reset)",
        r"other side closed",
        r"fetch failed",
        r"getaddrinfo",
        r"ECONNRESET|ECONNABORTED|ECONNREFUSED|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN",
        r"socket hang up",
        r"timed? out",
        r"timeout",
        r"terminated",
        r"websocket.{0,20}(closed|error|limit)",
        r"ended without",
        r"stream ended before",
        r"retry delay",
        r"retry your request",
        r"ResourceExhausted",
    ]
)
_NEVER_RETRY = (
    r"insufficient_quota|quota exceeded|exceeded your (current )?quota|billing|out of budget|"
    r"usage limit|usage_limit|limit reached for your plan|\b1308\b"
)


def is_retryable_error(
    message: Any, context_window: int | None = None, max_delay_ms: int | None = None
) -> bool:
    """Whether the session's auto-retry should repeat the request (reference §3.8).

    ``message`` is an assistant message (dict or model) or an error text. Never when the server
    asked for a delay the provider layer refused, or one over ``max_delay_ms`` (0/None: any).
    """
    if isinstance(message, str):
        text = message
    else:
        if _get(message, "stop_reason", "stopReason") != "error":
            return False
        if is_context_overflow(message, context_window):
            return False
        text = _get(message, "error_message", "errorMessage") or ""
    if not text or _re(_NEVER_RETRY).search(text) or overflow_text(text):
        return False
    found = _re(_SERVER_DELAY, 0).search(text)
    if found is not None:
        if found.group(2):
            return False
        if max_delay_ms and float(found.group(1)) * 1000 > max_delay_ms:
            return False
    return bool(_re(_TRANSIENT).search(text))


_SERVER_DELAY = r"the server asked to retry after (\d+(?:\.\d+)?)s(, longer than)?"


def _seconds(ms: float) -> str:
    tenths = math.ceil(ms / 100)  # rounded up to a tenth: waiting that long is enough
    return str(tenths // 10) if tenths % 10 == 0 else f"{tenths / 10:.1f}"


def server_delay_note(delay_ms: float, limit_ms: float | None = None) -> str:
    """The words an error text gets when the server asked to wait ``delay_ms`` before retrying;
    with ``limit_ms`` that was longer than allowed, and nothing will retry it."""
    if limit_ms:
        return (
            f"(the server asked to retry after {_seconds(delay_ms)}s, longer than the "
            f"{_seconds(limit_ms)}s limit of retry.provider.maxRetryDelayMs)"
        )
    return f"(the server asked to retry after {_seconds(delay_ms)}s)"


def server_retry_delay_ms(text: str | None) -> float | None:
    """The delay a :func:`server_delay_note` in ``text`` names, in ms (None: there is none)."""
    found = _re(_SERVER_DELAY, 0).search(text or "")
    return float(found.group(1)) * 1000 if found is not None else None
