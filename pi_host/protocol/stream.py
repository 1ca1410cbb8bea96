"""Streaming events a provider yields while an assistant message is built (reference §2).

Every non-terminal event carries ``partial``: the live assistant message, shared and mutated as
the stream goes. A stream is ``start``, block events keyed by ``content_index``, then exactly one
``done`` or ``error``. On the JSON/RPC wire ``partial`` is dropped (see :func:`event_to_wire`).
"""

from __future__ import annotations

from typing import Any, Literal

from pi_host.protocol.messages import AssistantMessage, PiModel, ToolCall


class StartEvent(PiModel):
    type: Literal["start"] = "start"
    partial: AssistantMessage


class TextStartEvent(PiModel):
    type: Literal["text_start"] = "text_start"
    content_index: int
    partial: AssistantMessage


class TextDeltaEvent(PiModel):
    type: Literal["text_delta"] = "text_delta"
    content_index: int
    delta: str
    partial: AssistantMessage


class TextEndEvent(PiModel):
    type: Literal["text_end"] = "text_end"
    content_index: int
    content: str
    """The authoritative full text of the block."""
    partial: AssistantMessage


class ThinkingStartEvent(PiModel):
    type: Literal["thinking_start"] = "thinking_start"
    content_index: int
    partial: AssistantMessage


class ThinkingDeltaEvent(PiModel):
    type: Literal["thinking_delta"] = "thinking_delta"
    content_index: int
    delta: str
    partial: AssistantMessage


class ThinkingEndEvent(PiModel):
    type: Literal["thinking_end"] = "thinking_end"
    content_index: int
    content: str
    partial: AssistantMessage


class ToolCallStartEvent(PiModel):
    type: Literal["toolcall_start"] = "toolcall_start"
    content_index: int
    partial: AssistantMessage


class ToolCallDeltaEvent(PiModel):
    type: Literal["toolcall_delta"] = "toolcall_delta"
    content_index: int
    delta: str
    """Raw JSON text as received; may be empty."""
    partial: AssistantMessage


class ToolCallEndEvent(PiModel):
    type: Literal["toolcall_end"] = "toolcall_end"
    content_index: int
    tool_call: ToolCall
    partial: AssistantMessage


class DoneEvent(PiModel):
    type: Literal["done"] = "done"
    reason: Literal["stop", "length", "toolUse"]
    message: AssistantMessage


class ErrorEvent(PiModel):
    type: Literal["error"] = "error"
    reason: Literal["error", "aborted"]
    error: AssistantMessage
    """The message so far, with ``stop_reason`` error/aborted and ``error_message`` set."""


AssistantMessageEvent = (
    StartEvent
    | TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ThinkingStartEvent
    | ThinkingDeltaEvent
    | ThinkingEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
    | DoneEvent
    | ErrorEvent
)


_WIRE_SKIP = frozenset({"partial"})


def event_to_wire(event: Any) -> dict[str, Any]:
    """The event as JSON/RPC modes print it inside ``message_update``.

    ``partial`` is stripped; ``toolcall_start`` gains the call's ``id`` and ``toolName``.
    """
    data = event.to_json(_WIRE_SKIP)
    if event.type == "toolcall_start":
        block = event.partial.content[event.content_index]
        data["id"] = block.id
        data["toolName"] = block.name
    return data
