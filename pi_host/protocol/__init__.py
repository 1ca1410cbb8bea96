"""The wire protocol: messages, content blocks, usage and streaming events (reference §1, §2).

This layer knows nothing about agents, sessions or files. Everything serialises with pi's exact
JSON field names (camelCase), so a message written by pi reads back here unchanged.

Names are imported on first use, so importing a small submodule (``pi_host.protocol.abort``)
does not load pydantic.
"""

from __future__ import annotations

from pi_host._exports import lazy_exports

_EXPORTS = {
    "AssistantMessage": ".messages",
    "AssistantMessageEvent": ".stream",
    "BashExecutionMessage": ".messages",
    "BranchSummaryMessage": ".messages",
    "CompactionSummaryMessage": ".messages",
    "Content": ".messages",
    "Cost": ".messages",
    "CustomMessage": ".messages",
    "DoneEvent": ".stream",
    "ErrorEvent": ".stream",
    "ImageContent": ".messages",
    "LlmContext": ".model",
    "Message": ".messages",
    "Model": ".model",
    "ModelCost": ".model",
    "PiModel": ".messages",
    "StartEvent": ".stream",
    "StopReason": ".messages",
    "StreamFn": ".model",
    "StreamOptions": ".model",
    "SystemMessage": ".messages",
    "TextContent": ".messages",
    "TextDeltaEvent": ".stream",
    "TextEndEvent": ".stream",
    "TextStartEvent": ".stream",
    "ThinkingContent": ".messages",
    "ThinkingDeltaEvent": ".stream",
    "ThinkingEndEvent": ".stream",
    "ThinkingStartEvent": ".stream",
    "ToolCall": ".messages",
    "ToolCallDeltaEvent": ".stream",
    "ToolCallEndEvent": ".stream",
    "ToolCallStartEvent": ".stream",
    "ToolDecl": ".messages",
    "ToolResultMessage": ".messages",
    "UnknownMessage": ".messages",
    "Usage": ".messages",
    "UserMessage": ".messages",
    "dump_message": ".messages",
    "event_to_wire": ".stream",
    "now_ms": ".messages",
    "parse_message": ".messages",
    "parse_messages": ".messages",
}

__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports("pi_host.protocol", _EXPORTS)
