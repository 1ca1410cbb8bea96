"""Thinking levels for OpenAI-style APIs, on top of the shared helpers in
:mod:`pi_host.lib.llm.tokens` (reference §3.2)."""

from __future__ import annotations

from typing import Any

from pi_host.lib.llm.tokens import clamp_thinking_level, map_level, thinking_budget


def clamp_level(model: Any, level: str | None) -> str:
    return clamp_thinking_level(model, level)


def mapped_value(model: Any, level: str) -> Any:
    """The provider value for a (clamped) level. ``off`` has a value only when the level map
    names one explicitly as a string (e.g. ``"none"``); otherwise nothing is sent for it."""
    if level == "off":
        value = (getattr(model, "thinking_level_map", None) or {}).get("off")
        return value if isinstance(value, str) else None
    return map_level(model, level)


def budget_for(level: str, budgets: dict[str, int] | None = None) -> int:
    return thinking_budget(level, budgets)
