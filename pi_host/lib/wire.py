"""Session events as JSON/RPC modes print them (reference §10.3).

Messages become pi's JSON; ``message_update`` is reduced to ``{type, usage, assistantMessageEvent}``
with the partial message stripped; tool results become ``{content, details?, structuredContent?}``.
One event is one line: ``\\n`` is the only separator, so U+2028/U+2029 stay escaped.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson

from pi_host.loop.tools import ToolResult
from pi_host.protocol import event_to_wire


def _default(value: Any) -> Any:
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, ToolResult):
        return tool_result_json(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, BaseException):
        return f"{type(value).__name__}: {value}"
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return repr(value)


def tool_result_json(result: ToolResult) -> dict[str, Any]:
    data: dict[str, Any] = {"content": [b.to_json() if hasattr(b, "to_json") else b for b in result.content]}
    if result.details is not None:
        data["details"] = result.details
    if result.structured_content is not None:
        data["structuredContent"] = result.structured_content
    return data


def event_json(event: dict[str, Any]) -> dict[str, Any]:
    """The wire form of one session event."""
    if event["type"] == "message_update":
        partial = event["message"]
        return {
            "type": "message_update",
            "usage": partial.usage.to_json(),
            "assistantMessageEvent": event_to_wire(event["assistantMessageEvent"]),
        }
    return event


def encode_line(record: dict[str, Any]) -> bytes:
    """One JSONL record. orjson leaves U+2028/U+2029 raw, which is valid JSON and not a separator
    for a reader that splits on ``\\n`` only."""
    return orjson.dumps(
        event_json(record),
        default=_default,
        option=orjson.OPT_APPEND_NEWLINE | orjson.OPT_PASSTHROUGH_DATACLASS,
    )
