"""Claude's limits on strict tools, and the sessions that went over them (pi 1.6.0 keeps one
record for every adapter that speaks to Claude: Anthropic's Messages API and Bedrock's Converse).

Claude refuses a request whose strict tools exceed its limits (20 strict tools, 16 optional or
union-typed parameters across them, a grammar too large) with a 400 naming the limit. The
adapter then sends the request again with the tools that only *prefer* strict sampling as plain
tools, and marks the session, so its later requests start plain: the tool set rarely changes,
and switching back would rewrite the tool definitions and miss the prompt cache.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

LIMIT_MESSAGES = (
    "The compiled grammar is too large",
    "Too many strict tools (",
    "Schemas contains too many parameters with union types (",
)
MAX_SESSIONS = 10_000
"""Sessions remembered at most (the oldest are forgotten first)."""

_over_limits: OrderedDict[str, None] = OrderedDict()


def is_limit_error(message: str) -> bool:
    """The error text is Claude refusing strict tools over its limits."""
    return any(text in message for text in LIMIT_MESSAGES)


def over_limits(session_id: str | None) -> bool:
    """Whether this session's requests start with the preferring tools plain."""
    return session_id is not None and session_id in _over_limits


def fallback_diagnostic(provider: str, refusal: str) -> dict[str, Any]:
    """The ``<provider>_strict_tools_fallback`` entry of a reply sent again with plain tools."""
    return {
        "type": f"{provider}_strict_tools_fallback",
        "timestamp": int(time.time() * 1000),
        "error": {"message": refusal},
        "details": {"reason": "strict_tool_limits_exceeded"},
    }


def mark_over_limits(session_id: str | None) -> None:
    if session_id is None:
        return
    _over_limits[session_id] = None
    while len(_over_limits) > MAX_SESSIONS:
        _over_limits.popitem(last=False)
