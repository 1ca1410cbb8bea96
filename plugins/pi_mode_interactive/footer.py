"""The footer's figures: token and cost totals over every assistant message of the session file (as
pi counts them: other branches and compacted-away messages included, so totals only grow), and the
context use of the current branch's last answer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_host.lib.render import FooterInfo

if TYPE_CHECKING:
    from pi_mode_interactive.screen_api import Screen

USAGE_KEYS = (
    ("input", "input"),
    ("output", "output"),
    ("cache_read", "cacheRead"),
    ("cache_write", "cacheWrite"),
)


def _number(value: Any) -> float:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


class SessionTotals:
    """Running sums over a store's entries; each call reads only the entries appended since the
    last one (a session file is append-only; a shorter list means another file: start again)."""

    def __init__(self) -> None:
        self._reset(None)

    def _reset(self, store: Any) -> None:
        self._store, self._seen = store, 0
        self.tokens = dict.fromkeys((key for key, _ in USAGE_KEYS), 0)
        self.cost = 0.0

    def update(self, store: Any) -> SessionTotals:
        try:
            entries = store.entries()
        except Exception:  # a store without a readable list: nothing to add
            return self
        if store is not self._store or len(entries) < self._seen:
            self._reset(store)
        for entry in entries[self._seen :]:
            message = entry.get("message") if entry.get("type") == "message" else None
            if not isinstance(message, dict) or message.get("role") != "assistant":
                continue
            usage = message.get("usage")
            if not isinstance(usage, dict):
                continue
            for key, wire in USAGE_KEYS:
                self.tokens[key] += int(_number(usage.get(wire)))
            cost = usage.get("cost")
            self.cost += float(_number(cost.get("total"))) if isinstance(cost, dict) else 0.0
        self._seen = len(entries)
        return self

    @property
    def seen_entries(self) -> int:
        return self._seen


def context_tokens(messages: list[Any]) -> int | None:
    """Tokens of the last answer that completed on this branch (what the next request resends)."""
    for message in reversed(messages):
        if getattr(message, "role", None) != "assistant" or message.stop_reason in ("aborted", "error"):
            continue
        usage = message.usage
        return usage.input + usage.output + usage.cache_read + usage.cache_write
    return None


def footer_info(ui: Screen, totals: SessionTotals) -> FooterInfo:
    session = ui.session
    totals.update(session.store)
    tokens, cost = totals.tokens, totals.cost
    if not totals.seen_entries:  # a store that lists no entries: the branch's messages
        tokens, cost = _from_messages(session.messages)
    model = session.model
    return FooterInfo(
        cwd=ui.cwd,
        git_branch=ui.git_branch,
        session_name=ui.session_name,
        provider=model.provider if model else None,
        model=model.id if model else None,
        thinking_level=session.thinking_level,
        reasoning=bool(model and model.reasoning),
        input_tokens=tokens["input"],
        output_tokens=tokens["output"],
        cache_read=tokens["cache_read"],
        cache_write=tokens["cache_write"],
        cost=cost,
        context_tokens=context_tokens(session.messages),
        context_window=model.context_window if model else None,
        statuses=dict(ui.statuses),
    )


def _from_messages(messages: list[Any]) -> tuple[dict[str, int], float]:
    tokens, cost = dict.fromkeys((key for key, _ in USAGE_KEYS), 0), 0.0
    for message in messages:
        if getattr(message, "role", None) != "assistant":
            continue
        for key, _ in USAGE_KEYS:
            tokens[key] += getattr(message.usage, key, 0) or 0
        cost += float(message.usage.cost.total or 0)
    return tokens, cost
