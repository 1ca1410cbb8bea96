"""The actionable boundaries of a run: ``turn_end`` after each turn and ``agent_before_settle``
before the session settles (pi's extension docs, "turn_start / turn_end").

Handlers see what pi's see: the turn's ``message`` and ``toolResults`` with the ids of their
session entries (``messageEntryId``, ``toolResultEntryIds``), the ``outcome`` (``completed``,
``aborted`` or ``error``), the ``entries`` proposed so far, the ``continue`` decision and a
``context`` preview rebuilt from those proposals when read (so each handler sees what the earlier
ones proposed). The proposals are appended after the last handler, each announced with
``entry_appended``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pi_host.loop import events
from pi_host.loop.convert import convert_to_llm
from pi_host.protocol import CustomMessage
from pi_host.session.store import TreeSessionStore

_PREVIEW_KEYS = ("contextEntries", "contextMessages", "llmMessages", "pendingMessages", "canContinue")


def outcome_of(message: Any) -> str:
    """``aborted``, ``error`` or ``completed``, from an assistant message's stop reason."""
    reason = getattr(message, "stop_reason", None)
    return reason if reason in ("aborted", "error") else "completed"


class BoundaryContext(Mapping[str, Any]):
    """pi's ``BoundaryContextPreview``, computed when a handler reads it: the context entries
    and messages as they will be once the proposed ``entries`` are appended, what the model would
    receive (``llmMessages``), the queued messages and whether a request can follow."""

    def __init__(self, session: Any, event: dict[str, Any]) -> None:
        self._session, self._event = session, event

    def __getitem__(self, key: str) -> Any:
        if key not in _PREVIEW_KEYS:
            raise KeyError(key)
        messages = _with_proposals(self._session.messages, self._event.get("entries") or [], self._session)
        if key == "contextMessages":
            return messages
        if key == "llmMessages":
            return convert_to_llm(messages)
        if key == "contextEntries":
            store = self._session.store
            entries = list(store.context_entries()) if isinstance(store, TreeSessionStore) else []
            return entries + [dict(e) for e in self._event.get("entries") or []]
        if key == "pendingMessages":
            return self._session.queues.pending_messages()
        return bool(messages) and getattr(messages[-1], "role", None) != "assistant"

    def __iter__(self) -> Iterator[str]:
        return iter(_PREVIEW_KEYS)

    def __len__(self) -> int:
        return len(_PREVIEW_KEYS)


def _with_proposals(messages: list[Any], proposals: list[dict[str, Any]], session: Any) -> list[Any]:
    """``messages`` with the proposed context edits applied and custom messages appended."""
    if not proposals:
        return list(messages)
    ids = session.entry_ids
    edits = {p["targetId"]: p.get("replacement") for p in proposals if p.get("type") == "context_edit"}
    out: list[Any] = []
    for message in messages:
        target = ids.get(id(message))
        if target in edits:
            replacement = edits[target]
            if replacement is None:
                continue
            message = message.model_copy(update={"content": replacement.get("content", message.content)})
        out.append(message)
    for proposal in proposals:
        if proposal.get("type") == "custom_message":
            out.append(_custom_message(proposal))
    return out


def _custom_message(entry: dict[str, Any]) -> CustomMessage:
    return CustomMessage(
        custom_type=entry.get("customType", "custom"),
        content=entry.get("content", ""),
        display=entry.get("display", True),
        details=entry.get("details"),
    )


async def turn_end(session: Any, turn_index: int, turn: dict[str, Any]) -> dict[str, Any] | None:
    """The ``turn_end`` boundary; ``{"action": "continue"}`` when a handler asked for one more
    request."""
    message, results = turn["message"], turn["toolResults"]
    ids = session.entry_ids
    event: dict[str, Any] = {
        "type": "turn_end",
        "turnIndex": turn_index,
        "message": message,
        "toolResults": results,
        "messageEntryId": ids.get(id(message)),
        "toolResultEntryIds": [ids.get(id(r)) for r in results],
        "outcome": outcome_of(message),
        "entries": [],
        "continue": False,
    }
    event["context"] = BoundaryContext(session, event)
    await session.host.dispatch("turn_end", event, session.ctx)
    await append_proposals(session, event["entries"])
    return {"action": "continue"} if event["continue"] else None


async def before_settle(session: Any, final: Any) -> bool:
    """The ``agent_before_settle`` boundary; True when a handler asked for one more request."""
    event: dict[str, Any] = {
        "type": "agent_before_settle",
        "outcome": outcome_of(final),
        "entries": [],
        "continue": False,
    }
    event["context"] = BoundaryContext(session, event)
    await session.host.dispatch("agent_before_settle", event, session.ctx)
    await append_proposals(session, event["entries"])
    return bool(event["continue"])


async def append_proposals(session: Any, entries: list[dict[str, Any]]) -> None:
    """Append the entries proposed at a boundary (the event's rule validated them), each
    announced with ``entry_appended``; a custom message joins the live context and a context edit
    takes effect in it at once."""
    for entry in entries:
        stored = session.store.append(dict(entry))
        if entry["type"] == "custom_message":
            session.messages.append(_custom_message(entry))
        elif entry["type"] == "context_edit":
            session.messages[:] = _with_proposals(session.messages, [entry], session)
        await session.emit_event(events.entry_appended(stored))
