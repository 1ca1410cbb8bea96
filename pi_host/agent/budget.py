"""Budgets: turns, cost, tokens and time, checked before each provider request.

A :class:`Budget` counts what its agent spent (one turn per assistant message, its cost and
tokens; the clock from when the budget was made). Budgets form a chain: a sub-agent's budget has
its parent's as ``parent``, a batch's tasks share one root, and every charge is added all the way
up, so a cap on the root holds for the whole tree. :meth:`Budget.check` answers before a request
whether it may be made: a request is refused when any budget of the chain has reached a limit,
or when the smallest cost the request can have would cross one (see :func:`projection`), so the
crossing request is never sent.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields
from typing import Any

__all__ = ["Budget", "Limits", "projection"]


@dataclass
class Limits:
    """Caps (None: no cap). ``time_s`` is wall-clock seconds since the budget was made."""

    turns: int | None = None
    cost: float | None = None
    tokens: int | None = None
    time_s: float | None = None

    def any(self) -> bool:
        return any(getattr(self, f.name) is not None for f in fields(self))

    @classmethod
    def from_settings(cls, value: Any) -> Limits:
        """The ``budgets`` settings object: ``maxTurns``, ``maxCost``, ``maxTokens``, ``maxTime``."""
        value = value if isinstance(value, dict) else {}
        return cls(
            turns=_number(value.get("maxTurns"), int),
            cost=_number(value.get("maxCost"), float),
            tokens=_number(value.get("maxTokens"), int),
            time_s=parse_duration(value.get("maxTime")),
        )

    def over(self, other: Limits) -> Limits:
        """These limits, each unset one taken from ``other`` (the command line over settings)."""
        return Limits(**{f.name: _first(getattr(self, f.name), getattr(other, f.name)) for f in fields(self)})


def _first(a: Any, b: Any) -> Any:
    return a if a is not None else b


def _number(value: Any, kind: type) -> Any:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = kind(value)
    except (TypeError, ValueError):
        return None
    return number if number >= 0 else None


def parse_duration(value: Any) -> float | None:
    """Seconds from ``90``, ``"90"``, ``"90s"``, ``"5m"`` or ``"1h"`` (None when unreadable)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if value >= 0 else None
    text = str(value).strip().lower()
    scale = {"s": 1, "m": 60, "h": 3600}.get(text[-1:], None)
    if scale is not None:
        text = text[:-1]
    try:
        seconds = float(text) * (scale or 1)
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


class Budget:
    """Limits and what was spent against them, optionally inside a ``parent`` budget."""

    def __init__(self, limits: Limits | None = None, *, parent: Budget | None = None, scope: str = "session"):
        self.limits = limits or Limits()
        self.parent = parent
        self.scope = scope
        """Whose budget: ``session``, ``subagent``, ``batch`` (named in ``budget_exceeded``)."""
        self.turns = 0
        self.cost = 0.0
        self.tokens = 0
        self.started = time.monotonic()

    def child(self, limits: Limits | None = None, scope: str = "subagent") -> Budget:
        return Budget(limits, parent=self, scope=scope)

    def charge(self, usage: Any, turns: int = 1) -> None:
        """Add one answer's usage (and its turn) here and in every enclosing budget."""
        cost = float(getattr(getattr(usage, "cost", None), "total", 0) or 0) if usage is not None else 0.0
        tokens = _tokens(usage)
        budget: Budget | None = self
        while budget is not None:
            budget.turns += turns
            budget.cost += cost
            budget.tokens += tokens
            budget = budget.parent

    def seed(self, messages: list[Any]) -> None:
        """Count what an earlier run of the same session spent (a resumed session goes on)."""
        for message in messages:
            if getattr(message, "role", None) == "assistant":
                self.charge(getattr(message, "usage", None))

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def check(self, next_cost: float = 0.0, next_tokens: int = 0) -> dict[str, Any] | None:
        """None when one more request fits every budget of the chain; else what it would cross:
        ``{"budget": "turns" | "cost" | "tokens" | "time", "limit", "spent", "scope"}``."""
        budget: Budget | None = self
        while budget is not None:
            found = budget.exceeded(next_cost, next_tokens)
            if found is not None:
                return found
            budget = budget.parent
        return None

    def exceeded(self, next_cost: float, next_tokens: int) -> dict[str, Any] | None:
        limits = self.limits
        if limits.turns is not None and self.turns >= limits.turns:
            return self._found("turns", limits.turns, self.turns)
        if limits.cost is not None and (self.cost >= limits.cost or self.cost + next_cost > limits.cost):
            return self._found("cost", limits.cost, round(self.cost, 6), next_cost)
        if limits.tokens is not None and (
            self.tokens >= limits.tokens or self.tokens + next_tokens > limits.tokens
        ):
            return self._found("tokens", limits.tokens, self.tokens, next_tokens)
        if limits.time_s is not None and self.elapsed() >= limits.time_s:
            return self._found("time", limits.time_s, round(self.elapsed(), 3))
        return None

    def _found(self, kind: str, limit: Any, spent: Any, projected: Any = None) -> dict[str, Any]:
        found = {"budget": kind, "limit": limit, "spent": spent, "scope": self.scope}
        if projected:
            found["nextAtLeast"] = round(projected, 6) if isinstance(projected, float) else projected
        return found

    def totals(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "cost": round(self.cost, 6),
            "tokens": self.tokens,
            "seconds": round(self.elapsed(), 3),
        }


def _tokens(usage: Any) -> int:
    if usage is None:
        return 0
    total = int(getattr(usage, "total_tokens", 0) or 0)
    if total:
        return total
    return sum(int(getattr(usage, name, 0) or 0) for name in ("input", "output", "cache_read", "cache_write"))


def projection(messages: list[Any], model: Any) -> tuple[float, int]:
    """The least the next request can cost, in USD and tokens.

    Everything the previous request sent and received goes out again, so the next request's
    prompt holds at least the previous answer's input, cache and output tokens; priced at the
    model's cheapest input rate (a cache read when it has one), that is a lower bound: a request
    refused on it would certainly have crossed the cap. Nothing is known before the first answer
    of a session: (0, 0)."""
    last = next(
        (m for m in reversed(messages) if getattr(m, "role", None) == "assistant" and not _empty(m)), None
    )
    if last is None:
        return 0.0, 0
    usage = last.usage
    tokens = int(usage.input or 0) + int(usage.cache_read or 0) + int(usage.cache_write or 0)
    tokens += int(usage.output or 0)
    rates = getattr(model, "cost", None)
    prices = [float(getattr(rates, name, 0) or 0) for name in ("input", "cache_read")] if rates else []
    positive = [price for price in prices if price > 0]
    cost = tokens * min(positive) / 1_000_000 if positive else 0.0
    return cost, tokens


def _empty(message: Any) -> bool:
    usage = getattr(message, "usage", None)
    return usage is None or (hasattr(usage, "is_empty") and usage.is_empty())
