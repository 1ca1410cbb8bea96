"""A run and its turns, messages and tool executions (reference §4.7, §9.3). Every session event
also reaches ``on_event``. The payloads of the stream events are the TypedDicts of
:mod:`pi_host.loop.events`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from pi_host.plugins.hookspecs._marker import hookspec
from pi_host.plugins.rules import IGNORED, BadReturn, Rule, expect_dict, returns

if TYPE_CHECKING:
    from pi_host.loop import events

__all__ = [
    "BOUNDARY_ENTRY_TYPES",
    "on_agent_before_settle",
    "on_agent_end",
    "on_agent_settled",
    "on_agent_start",
    "on_event",
    "on_message_end",
    "on_message_start",
    "on_message_update",
    "on_tool_execution_end",
    "on_tool_execution_start",
    "on_tool_execution_update",
    "on_turn_end",
    "on_turn_start",
]

BOUNDARY_ENTRY_TYPES = ("custom", "custom_message", "context_edit", "compaction")


if TYPE_CHECKING:  # payload types, for type checkers and readers (free at run time)

    class BoundaryResult(TypedDict, total=False):
        entries: list[dict[str, Any]]
        """Session entries to append after every handler ran (types: custom, custom_message,
        context_edit, compaction); replaces earlier handlers' proposal."""
        continue_: bool
        """Spelled ``continue``: ``True`` guarantees one more provider request."""


def _content_ok(content: Any) -> bool:
    return isinstance(content, str) or (
        isinstance(content, list)
        and all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in content)
    )


_ENTRY_FIELDS: dict[str, list[tuple[str, Any, str]]] = {
    # entry type: (field, test, what it must be) for the fields pi requires (reference §6.3)
    "custom": [("customType", lambda v: isinstance(v, str) and v, "a non-empty string")],
    "custom_message": [
        ("customType", lambda v: isinstance(v, str) and v, "a non-empty string"),
        ("content", _content_ok, "a string or a list of content blocks"),
    ],
    "context_edit": [
        ("targetId", lambda v: isinstance(v, str) and v, "an entry id"),
        ("replacement", lambda v: v is None or isinstance(v, dict), "null or a message"),
    ],
    "compaction": [
        ("summary", lambda v: isinstance(v, str) and v.strip(), "a non-empty string"),
        ("firstKeptEntryId", lambda v: v is None or isinstance(v, str), "an entry id"),
    ],
}


def _check_boundary(event: dict[str, Any], result: Any) -> Any:
    result = expect_dict(result)
    entries = result.get("entries")
    if entries is not None:
        if not isinstance(entries, list):
            raise BadReturn("entries must be a list")
        for entry in entries:
            kind = entry.get("type") if isinstance(entry, dict) else None
            if kind not in BOUNDARY_ENTRY_TYPES:
                raise BadReturn(f"entry {entry!r}: type must be one of {', '.join(BOUNDARY_ENTRY_TYPES)}")
            for name, test, what in _ENTRY_FIELDS[kind]:
                if not test(entry.get(name)):
                    raise BadReturn(f"{kind} entry: {name} must be {what}")
    if "continue" in result and not isinstance(result["continue"], bool):
        raise BadReturn("continue must be true or false")
    return result


def _fold_boundary(event: dict[str, Any], result: Any) -> None:
    if "entries" in result:
        event["entries"] = list(result["entries"] or [])
    if "continue" in result:
        event["continue"] = bool(result["continue"])


BOUNDARY = Rule("entries and continue replace earlier proposals", check=_check_boundary, fold=_fold_boundary)


@hookspec
@returns(IGNORED)
def on_agent_start(event: events.AgentStart, ctx: Any) -> None:
    """A run starts (a prompt may take several runs: retries, recovery, continuations)."""


@hookspec
@returns(IGNORED)
def on_agent_end(event: events.AgentEnd, ctx: Any) -> None:
    """A run ended; not an idle signal (see ``agent_settled``)."""


if TYPE_CHECKING:

    class BoundaryContextPreview(TypedDict):
        """Read when a handler reads it, with the proposals so far applied."""

        contextEntries: list[dict[str, Any]]
        contextMessages: list[Any]
        llmMessages: list[Any]
        pendingMessages: list[Any]
        canContinue: bool

    class SettleEvent(TypedDict):
        type: str
        outcome: str
        """``completed``, ``aborted`` or ``error``."""
        entries: list[dict[str, Any]]
        continue_: bool
        """Spelled ``continue``."""
        context: BoundaryContextPreview


@hookspec
@returns(BOUNDARY)
def on_agent_before_settle(event: SettleEvent, ctx: Any) -> BoundaryResult | None:
    """Before the session settles (skipped after an abort): propose entries, ask to continue."""


@hookspec
@returns(IGNORED)
def on_agent_settled(event: events.AgentSettled, ctx: Any) -> None:
    """The prompt is done and the session idle."""


if TYPE_CHECKING:

    class TurnStartEvent(TypedDict):
        turnIndex: int
        timestamp: int


@hookspec
@returns(IGNORED)
def on_turn_start(event: TurnStartEvent, ctx: Any) -> None:
    """A turn (one provider request and its tool calls) starts."""


if TYPE_CHECKING:

    class TurnEndEvent(TypedDict):
        type: str
        turnIndex: int
        message: Any
        toolResults: list[Any]
        messageEntryId: str | None
        """The session entry of ``message`` (a ``context_edit`` can target it)."""
        toolResultEntryIds: list[str | None]
        outcome: str
        """``completed``, ``aborted`` or ``error`` (the answer's stop reason)."""
        entries: list[dict[str, Any]]
        continue_: bool
        """Spelled ``continue``."""
        context: BoundaryContextPreview


@hookspec
@returns(BOUNDARY)
def on_turn_end(event: TurnEndEvent, ctx: Any) -> BoundaryResult | None:
    """A turn ended: propose entries, ask for one more request."""


@hookspec
@returns(IGNORED)
def on_message_start(event: events.MessageStart, ctx: Any) -> None:
    """A message (any role) starts; an assistant message then streams ``message_update``."""


@hookspec
@returns(IGNORED)
def on_message_update(event: events.MessageUpdate, ctx: Any) -> None:
    """One streamed assistant event."""


if TYPE_CHECKING:

    class MessageReplacement(TypedDict):
        message: Any
        """A message of the same role (a model or pi-shaped dict)."""


def _check_message_end(event: dict[str, Any], result: Any) -> Any:
    result = expect_dict(result)
    message = result.get("message")
    if message is None:
        return None
    if isinstance(message, dict):
        from pi_host.protocol import parse_message

        try:
            message = parse_message(message)
        except ValueError as exc:
            raise BadReturn(f"message is not a valid message: {str(exc).splitlines()[0]}") from None
    role = getattr(event["message"], "role", None)
    if getattr(message, "role", None) != role:
        raise BadReturn(f"message must keep the role {role!r}")
    return {**result, "message": message}


def _fold_message(event: dict[str, Any], result: Any) -> None:
    event["message"] = result["message"]


@hookspec
@returns(Rule("{message} replaces it (same role), chained", check=_check_message_end, fold=_fold_message))
def on_message_end(event: events.MessageEnd, ctx: Any) -> MessageReplacement | None:
    """A message is complete, before it is stored."""


@hookspec
@returns(IGNORED)
def on_tool_execution_start(event: events.ToolExecutionStart, ctx: Any) -> None:
    """A tool call is about to be prepared (raw arguments)."""


@hookspec
@returns(IGNORED)
def on_tool_execution_update(event: events.ToolExecutionUpdate, ctx: Any) -> None:
    """A running tool streamed a partial result."""


@hookspec
@returns(IGNORED)
def on_tool_execution_end(event: events.ToolExecutionEnd, ctx: Any) -> None:
    """A tool call finished (``result``, ``isError``, ``durationMs?``)."""


@hookspec
@returns(IGNORED)
def on_event(event: dict[str, Any], ctx: Any) -> None:
    """Every session event (``event["type"]`` names it), after its specific hook: for
    renderers, loggers and bridges."""
