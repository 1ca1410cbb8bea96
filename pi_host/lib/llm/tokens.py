"""Output-token cap and thinking levels/budgets (reference §3.2).

The cap defaults to the model's ``maxTokens`` clamped so that prompt + answer fit the context
window. Thinking levels are clamped to what a model supports; budget models get token budgets
that always leave at least 1024 tokens for the answer.
"""

from __future__ import annotations

import math
from typing import Any

LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
DEFAULT_BUDGETS: dict[str, int] = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
ANSWER_RESERVE = 1024
CHARS_PER_TOKEN = 3.5
IMAGE_CHARS = 4800


# --- context estimate -------------------------------------------------------------------------


def _message_chars(message: Any) -> int:
    role = getattr(message, "role", None)
    content = getattr(message, "content", None)
    chars = 0
    if isinstance(content, str):
        chars += len(content)
    else:
        for block in content or ():
            kind = getattr(block, "type", None)
            if kind == "text":
                chars += len(block.text)
            elif kind == "thinking":
                chars += len(block.thinking)
            elif kind == "image":
                chars += IMAGE_CHARS
            elif kind == "toolCall":
                chars += len(block.name) + len(str(block.arguments))
    if role == "system":
        chars += sum(len(v or "") for v in (getattr(message, "sections", None) or {}).values())
        for tool in getattr(message, "tools_added", None) or ():
            chars += len(tool.name) + len(tool.description) + len(str(tool.parameters))
    return chars


def _usage_tokens(usage: Any) -> int:
    total = getattr(usage, "total_tokens", 0) or 0
    if total:
        return total
    return (usage.input or 0) + (usage.output or 0) + (usage.cache_read or 0) + (usage.cache_write or 0)


def estimate_context_tokens(messages: list[Any]) -> int:
    """Tokens of the last assistant's reported usage plus the messages after it (3.5 chars/token)."""
    base = 0
    start = 0
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if getattr(message, "role", None) != "assistant" or message.stop_reason in ("error", "aborted"):
            continue
        if not message.usage.is_empty():
            base = _usage_tokens(message.usage)
            start = index + 1
            break
    chars = sum(_message_chars(m) for m in messages[start:])
    return base + math.ceil(chars / CHARS_PER_TOKEN)


def clamp_max_tokens(model: Any, messages: list[Any] | None = None, requested: int | None = None) -> int:
    """The output cap: ``requested`` (or the model's maxTokens) fitted to the context window."""
    limit = requested or model.max_tokens
    window = model.context_window
    if not window or messages is None:
        return max(1, min(limit, model.max_tokens) if requested is None else limit)
    used = estimate_context_tokens(messages)
    margin = max(4096, math.ceil(0.15 * used))
    room = window - used - margin
    if room < 32768:
        room = min(32768, window - used - 4096)
    return min(limit, max(1, room))


# --- thinking -----------------------------------------------------------------------------------


def supported_levels(model: Any) -> list[str]:
    """The pi levels a model supports; ``xhigh``/``max`` only when its level map declares them."""
    if not getattr(model, "reasoning", False):
        return ["off"]
    mapping = getattr(model, "thinking_level_map", None) or {}
    levels = []
    for level in LEVELS:
        if level in mapping and mapping[level] is None:
            continue
        if level in ("xhigh", "max") and level not in mapping:
            continue
        levels.append(level)
    return levels


def clamp_thinking_level(model: Any, level: str | None) -> str:
    """``level`` if supported, else the next higher supported level, else the next lower one (pi
    1.6.0's order: a model that skips ``high`` but has ``xhigh`` gets ``xhigh``)."""
    level = level or "off"
    supported = supported_levels(model)
    if level in supported:
        return level
    if level not in LEVELS:
        return supported[0] if supported else "off"
    position = LEVELS.index(level)
    for candidate in (*LEVELS[position + 1 :], *reversed(LEVELS[:position])):
        if candidate in supported:
            return candidate
    return supported[0] if supported else "off"


def map_level(model: Any, level: str) -> str | None:
    """The provider's value for a pi level (``thinkingLevelMap``), or the level itself."""
    mapping = getattr(model, "thinking_level_map", None) or {}
    if level in mapping:
        return mapping[level]
    return level


def thinking_budget(level: str, budgets: dict[str, int] | None = None) -> int:
    """Default token budget for a level (``xhigh``/``max`` use ``high``); settings override."""
    key = "high" if level in ("xhigh", "max") else level
    if budgets and isinstance(budgets.get(level), int):
        return budgets[level]
    if budgets and isinstance(budgets.get(key), int):
        return budgets[key]
    return DEFAULT_BUDGETS.get(key, 0)


def apply_budget(cap: int, budget: int, model_max: int) -> tuple[int, int]:
    """``(max_tokens, budget_to_send)`` for a budget request; ≥ 1024 tokens stay for the answer."""
    max_tokens = min(cap + budget, model_max)
    if max_tokens <= budget:
        budget = max(0, max_tokens - ANSWER_RESERVE)
    return max_tokens, min(budget, max(0, max_tokens - ANSWER_RESERVE))
