"""Every session event, with pi's field names (reference §4.7, §7.8, §3.8).

One event is one dict: ``{"type": <name>, ...fields}``, messages inside as protocol models. The
loop emits the run events (``agent_*``, ``turn_*``, ``message_*``, ``tool_execution_*``); the
session and the machinery around it emit the rest. Listeners, plugin ``on_<type>`` hooks and the
JSON/RPC modes all receive these dicts (``pi_host.lib.wire`` prints them), so the constructors
below are the only place an event's shape is written down. ``message_update`` carries the
partial message as ``message``; its wire form drops it and sends ``usage`` instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict

Message = Any
"""A protocol message model (``pi_host.protocol``); any role unless the event says assistant."""


if TYPE_CHECKING:  # the event types, for type checkers and readers (free at run time)

    class AgentStart(TypedDict):
        type: Literal["agent_start"]

    class AgentEnd(TypedDict):
        type: Literal["agent_end"]
        messages: list[Message]
        willRetry: NotRequired[bool]

    class AgentSettled(TypedDict):
        type: Literal["agent_settled"]
        aborted: bool

    class TurnStart(TypedDict):
        type: Literal["turn_start"]

    class TurnEnd(TypedDict):
        type: Literal["turn_end"]
        message: Message
        toolResults: list[Message]

    class MessageStart(TypedDict):
        type: Literal["message_start"]
        message: Message

    class MessageUpdate(TypedDict):
        type: Literal["message_update"]
        message: Message
        assistantMessageEvent: Any

    class MessageEnd(TypedDict):
        type: Literal["message_end"]
        message: Message

    class ToolExecutionStart(TypedDict):
        type: Literal["tool_execution_start"]
        toolCallId: str
        toolName: str
        args: Any

    class ToolExecutionUpdate(TypedDict):
        type: Literal["tool_execution_update"]
        toolCallId: str
        toolName: str
        args: Any
        partialResult: Any

    class ToolExecutionEnd(TypedDict):
        type: Literal["tool_execution_end"]
        toolCallId: str
        toolName: str
        result: dict[str, Any]
        """``{content, details?, structuredContent?}``."""
        isError: bool
        durationMs: NotRequired[int]

    class QueueUpdate(TypedDict):
        type: Literal["queue_update"]
        steering: list[str]
        followUp: list[str]

    class CompactionStart(TypedDict):
        type: Literal["compaction_start"]
        reason: str
        """``manual``, ``threshold`` or ``overflow``."""

    class CompactionEnd(TypedDict):
        type: Literal["compaction_end"]
        reason: str
        aborted: bool
        willRetry: bool
        result: NotRequired[dict[str, Any]]
        errorMessage: NotRequired[str]

    class AutoRetryStart(TypedDict):
        type: Literal["auto_retry_start"]
        attempt: int
        maxAttempts: int
        delayMs: int
        errorMessage: str

    class AutoRetryEnd(TypedDict):
        type: Literal["auto_retry_end"]
        success: bool
        attempt: int
        finalError: NotRequired[str]

    class SummarizationRetry(TypedDict, total=False):
        """``summarization_retry_attempt_start`` / ``_scheduled`` / ``_finished``, with pi's other
        fields (``attempt``, ``maxAttempts``, ``delayMs``, ``errorMessage``, ``success``...)."""

        type: str
        source: str

    class EntryAppended(TypedDict):
        type: Literal["entry_appended"]
        entry: dict[str, Any]

    class SessionInfoChanged(TypedDict):
        type: Literal["session_info_changed"]
        name: NotRequired[str]

    class ExtensionError(TypedDict):
        """Not a session event: a plugin failure as JSON/RPC modes print it."""

        type: Literal["extension_error"]
        extensionPath: str
        plugin: str
        event: str
        error: str


def _compact(event: dict[str, Any]) -> Any:
    """Optional fields given as None are left out, as pi leaves them undefined."""
    return {key: value for key, value in event.items() if value is not None}


def agent_start() -> AgentStart:
    return {"type": "agent_start"}


def agent_end(messages: list[Message]) -> AgentEnd:
    return {"type": "agent_end", "messages": messages}


def agent_settled(aborted: bool) -> AgentSettled:
    return {"type": "agent_settled", "aborted": aborted}


def turn_start() -> TurnStart:
    return {"type": "turn_start"}


def turn_end(message: Message, tool_results: list[Message]) -> TurnEnd:
    return {"type": "turn_end", "message": message, "toolResults": tool_results}


def message_start(message: Message) -> MessageStart:
    return {"type": "message_start", "message": message}


def message_update(message: Message, event: Any) -> MessageUpdate:
    return {"type": "message_update", "message": message, "assistantMessageEvent": event}


def message_end(message: Message) -> MessageEnd:
    return {"type": "message_end", "message": message}


def tool_execution_start(call_id: str, name: str, args: Any) -> ToolExecutionStart:
    return {"type": "tool_execution_start", "toolCallId": call_id, "toolName": name, "args": args}


def tool_execution_update(call_id: str, name: str, args: Any, partial: Any) -> ToolExecutionUpdate:
    return {
        "type": "tool_execution_update",
        "toolCallId": call_id,
        "toolName": name,
        "args": args,
        "partialResult": partial,
    }


def tool_execution_end(
    call_id: str, name: str, result: dict[str, Any], is_error: bool, duration_ms: int | None = None
) -> ToolExecutionEnd:
    fields = {
        "toolCallId": call_id,
        "toolName": name,
        "result": result,
        "isError": is_error,
        "durationMs": duration_ms,
    }
    return _compact({"type": "tool_execution_end", **fields})


def queue_update(steering: list[str], follow_up: list[str]) -> QueueUpdate:
    return {"type": "queue_update", "steering": steering, "followUp": follow_up}


def compaction_start(reason: str) -> CompactionStart:
    return {"type": "compaction_start", "reason": reason}


def compaction_end(
    reason: str,
    *,
    aborted: bool = False,
    will_retry: bool = False,
    result: Any = None,
    error_message: str | None = None,
) -> CompactionEnd:
    fields = {"result": result, "aborted": aborted, "willRetry": will_retry, "errorMessage": error_message}
    return _compact({"type": "compaction_end", "reason": reason, **fields})


def auto_retry_start(attempt: int, max_attempts: int, delay_ms: int, error_message: str) -> AutoRetryStart:
    fields = {
        "attempt": attempt,
        "maxAttempts": max_attempts,
        "delayMs": delay_ms,
        "errorMessage": error_message,
    }
    return {"type": "auto_retry_start", **fields}  # type: ignore[typeddict-item]


def auto_retry_end(success: bool, attempt: int, final_error: str | None = None) -> AutoRetryEnd:
    return _compact(
        {"type": "auto_retry_end", "success": success, "attempt": attempt, "finalError": final_error}
    )


def summarization_retry(kind: str, source: str, **fields: Any) -> SummarizationRetry:
    """``kind`` is ``attempt_start``, ``scheduled`` or ``finished``; ``fields`` use pi's names."""
    return _compact({"type": f"summarization_retry_{kind}", "source": source, **fields})


def entry_appended(entry: dict[str, Any]) -> EntryAppended:
    """An entry appended to the session file outside the message flow (a retry's or recovery's
    ``context_edit``, an entry proposed at a boundary), as pi announces them."""
    return {"type": "entry_appended", "entry": entry}


def session_info_changed(name: str | None) -> SessionInfoChanged:
    return _compact({"type": "session_info_changed", "name": name})


def extension_error(failure: dict[str, Any]) -> ExtensionError:
    keys = ("extensionPath", "plugin", "event", "error")
    return {"type": "extension_error", **{key: failure[key] for key in keys}}  # type: ignore[typeddict-item]


if TYPE_CHECKING:
    SessionEvent = (
        AgentStart
        | AgentEnd
        | AgentSettled
        | TurnStart
        | TurnEnd
        | MessageStart
        | MessageUpdate
        | MessageEnd
        | ToolExecutionStart
        | ToolExecutionUpdate
        | ToolExecutionEnd
        | QueueUpdate
        | CompactionStart
        | CompactionEnd
        | AutoRetryStart
        | AutoRetryEnd
        | SummarizationRetry
        | EntryAppended
        | SessionInfoChanged
    )
