"""A session's budget: its limits (command line over the ``budgets`` setting), what earlier runs
of the same session file spent, and the record of a stop.

Every session built by the runtime gets a :class:`pi_host.agent.budget.Budget` on its agent,
limits or not, so a sub-agent's spending can be added up into its parent's (and a batch's into
the batch's). When a budget stops a run the session file gets a ``custom`` entry
(``customType`` ``budget_exceeded``, which pi opens and keeps out of the model's context) and a
one-line warning says why; the ``budget_exceeded`` event itself reaches plugins, the JSON stream
and RPC like every session event.
"""

from __future__ import annotations

from typing import Any

from pi_host.agent.budget import Budget, Limits

STOP_ENTRY = "budget_exceeded"

_UNITS = {"turns": "turns", "cost": "USD", "tokens": "tokens", "time": "s"}


def limits_for(given: Limits | None, settings: dict[str, Any]) -> Limits:
    """The command line's limits, each unset one from the ``budgets`` setting."""
    from_settings = Limits.from_settings(settings.get("budgets"))
    return given.over(from_settings) if given is not None else from_settings


def attach_budget(
    session: Any, limits: Limits, parent: Budget | None = None, scope: str = "session"
) -> Budget:
    """Give ``session``'s agent its budget (inside ``parent``'s when given), counting what the
    session's file already holds, and record a stop in the file."""
    budget = Budget(limits, parent=None, scope=scope)
    if limits.any() or parent is not None:
        # Counting what the file holds decodes every message of it: only worth it when there
        # is a limit to enforce (a resumed 50 MiB session must not be read whole otherwise).
        # Before linking: earlier runs were already counted by the parent's file.
        budget.seed(_entries(session.store))
    budget.parent = parent
    session.agent.budget = budget

    def on_event(event: dict[str, Any]) -> None:
        if event.get("type") != "budget_exceeded" or "scope" not in event:
            return
        data = {k: v for k, v in event.items() if k != "type"}
        data["totals"] = budget.totals()
        session.store.append({"type": "custom", "customType": STOP_ENTRY, "data": data})
        session.warn(describe(event))

    session.subscribe(on_event)
    return budget


def describe(event: dict[str, Any]) -> str:
    """``stopped: cost budget reached (0.012 of 0.01 USD, session)``."""
    kind = event.get("budget", "?")
    unit = _UNITS.get(kind, "")
    where = event.get("scope", "session")
    return f"stopped: {kind} budget reached ({event.get('spent')} of {event.get('limit')} {unit}, {where})"


def _entries(store: Any) -> list[Any]:
    """The assistant messages of every entry of the file (all branches: all were paid for)."""
    read = getattr(store, "entries", None)
    if read is None:
        return []
    try:
        entries = read()
    except Exception:  # a store that cannot list its entries: count from zero
        return []
    messages = []
    for entry in entries:
        if entry.get("type") != "message":
            continue
        message = entry.get("message")
        if hasattr(message, "role"):
            messages.append(message)
        elif isinstance(message, dict) and message.get("role") == "assistant":
            messages.append(_Usage(message.get("usage") or {}))
    return messages


class _Usage:
    """An assistant message read as plain JSON: just what the budget counts."""

    role = "assistant"

    def __init__(self, usage: dict[str, Any]) -> None:
        cost = usage.get("cost") or {}
        self.usage = _Fields(
            input=usage.get("input", 0),
            output=usage.get("output", 0),
            cache_read=usage.get("cacheRead", 0),
            cache_write=usage.get("cacheWrite", 0),
            total_tokens=usage.get("totalTokens", 0),
            cost=_Fields(total=cost.get("total", 0)),
        )


class _Fields:
    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)
