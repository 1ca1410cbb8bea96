"""Token estimates for compaction decisions (reference §7.2).

Compaction needs a number that is cheap and stable rather than exact: ``ceil(chars / 4)`` per
message, with 4800 characters per image. The context size is the provider-reported usage of the
last valid assistant answer plus estimates for everything after it; without such an answer, the
sum of estimates. Every function accepts protocol models *and* the plain pi-JSON dicts stored in
session entries, so threshold checks can run on entries without parsing them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

CHARS_PER_TOKEN = 4
IMAGE_CHARS = 4800


def _get(obj: Any, snake: str, camel: str | None = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(camel or snake, obj.get(snake) if camel else None)
    return getattr(obj, snake, None)


def _json(value: Any) -> str:
    """``JSON.stringify`` equivalent (compact, non-ASCII kept)."""
    if hasattr(value, "to_json"):
        value = value.to_json()
    elif isinstance(value, list):
        value = [v.to_json() if hasattr(v, "to_json") else v for v in value]
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _content_chars(content: Any, assistant: bool = False) -> int:
    if content is None:
        return 0
    if isinstance(content, str):
        return len(content)
    chars = 0
    for block in content:
        kind = _get(block, "type")
        if kind == "text":
            chars += len(_get(block, "text") or "")
        elif kind == "image":
            chars += IMAGE_CHARS
        elif assistant and kind == "thinking":
            chars += len(_get(block, "thinking") or "")
        elif assistant and kind == "toolCall":
            chars += len(_get(block, "name") or "") + len(_json(_get(block, "arguments") or {}))
    return chars


def message_chars(message: Any) -> int:
    """The character count §7.2 assigns to one message (any role, model or dict)."""
    role = _get(message, "role")
    if role == "assistant":
        return _content_chars(_get(message, "content"), assistant=True)
    if role in ("user", "custom", "toolResult"):
        return _content_chars(_get(message, "content"))
    if role == "system":
        chars = _content_chars(_get(message, "content"))
        sections = _get(message, "sections") or {}
        chars += sum(len(v) for v in sections.values() if isinstance(v, str))
        tools = _get(message, "tools_added", "toolsAdded")
        if tools:
            chars += len(_json(list(tools)))
        return chars
    if role == "bashExecution":
        return len(_get(message, "command") or "") + len(_get(message, "output") or "")
    if role in ("branchSummary", "compactionSummary"):
        return len(_get(message, "summary") or "")
    return 0


def estimate_message_tokens(message: Any) -> int:
    return math.ceil(message_chars(message) / CHARS_PER_TOKEN)


def estimate_messages_tokens(messages: list[Any]) -> int:
    return sum(estimate_message_tokens(m) for m in messages)


def usage_is_valid(message: Any) -> bool:
    """An assistant answer whose usage can stand for the context size."""
    if _get(message, "role") != "assistant":
        return False
    if _get(message, "stop_reason", "stopReason") in ("error", "aborted"):
        return False
    return usage_tokens(_get(message, "usage")) > 0


def usage_tokens(usage: Any) -> int:
    """``calculateContextTokens``: ``totalTokens``, or the sum of the four parts when it is 0."""
    if usage is None:
        return 0
    total = _get(usage, "total_tokens", "totalTokens") or 0
    if total:
        return int(total)
    parts = (
        _get(usage, "input"),
        _get(usage, "output"),
        _get(usage, "cache_read", "cacheRead"),
        _get(usage, "cache_write", "cacheWrite"),
    )
    return int(sum(p or 0 for p in parts))


def estimate_context_tokens(messages: list[Any]) -> int:
    """Usage of the last valid assistant answer plus estimates of the messages after it."""
    for index in range(len(messages) - 1, -1, -1):
        if usage_is_valid(messages[index]):
            base = usage_tokens(_get(messages[index], "usage"))
            return base + estimate_messages_tokens(messages[index + 1 :])
    return estimate_fresh(messages)


def estimate_fresh(messages: list[Any]) -> int:
    """Estimate without any usage, counting the replayed system state once (§7.2)."""
    system = [m for m in messages if _get(m, "role") == "system"]
    total = estimate_messages_tokens([m for m in messages if _get(m, "role") != "system"])
    if len(system) == 1:
        total += estimate_message_tokens(system[0])
    elif system:
        from pi_host.lib.sessions.tree import current_system_message

        replayed = current_system_message(system)
        if replayed is not None:
            total += estimate_message_tokens(replayed)
    return total


def entry_tokens(entry: dict[str, Any]) -> int:
    """The estimate of what one session entry contributes (before context edits)."""
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        return estimate_message_tokens(message) if isinstance(message, dict) else 0
    if kind == "custom_message":
        return math.ceil(_content_chars(entry.get("content")) / CHARS_PER_TOKEN)
    if kind in ("branch_summary", "compaction"):
        return math.ceil(len(entry.get("summary") or "") / CHARS_PER_TOKEN)
    return 0


Entry = dict[str, Any]


def branch_context_tokens(path: list[Entry], messages: list[Any]) -> int:
    """Context size of the branch ``path`` (§7.1 ``contextTokens``).

    The last valid assistant usage plus estimates of the entries after it; a compaction or
    ``context_edit`` after the last usable answer makes that usage stale, and the projected
    context ``messages`` are estimated from scratch instead.
    """
    return context_tokens_back(reversed(path), messages)


def context_tokens_back(back: Iterable[Entry], messages: list[Any]) -> int:
    """:func:`branch_context_tokens` over the entries newest first."""
    tail = 0
    for entry in back:
        kind = entry["type"]
        if kind in ("compaction", "context_edit"):
            break
        if kind == "message":
            message = entry.get("message")
            if isinstance(message, dict) and usage_is_valid(message):
                return usage_tokens(message.get("usage")) + tail
        tail += entry_tokens(entry)
    return estimate_fresh(messages)


def last_assistant_predates_compaction(back: Iterable[Entry]) -> bool:
    """True when there is no assistant answer after the latest compaction (nothing new)."""
    for entry in back:
        if entry["type"] == "compaction":
            return True
        message = entry.get("message")
        if entry["type"] == "message" and isinstance(message, dict) and message.get("role") == "assistant":
            return False
    return True
