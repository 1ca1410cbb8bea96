"""Session events as JSON/RPC modes print them (reference §10.3).

Messages become pi's JSON; ``message_update`` is reduced to ``{type, usage, assistantMessageEvent}``
with the partial message stripped; tool results become ``{content, details?, structuredContent?}``.
One event is one line: ``\\n`` is the only separator, so U+2028/U+2029 stay escaped.

Text crosses this boundary the way JavaScript strings do, so pi's readers and ours agree: a
string may hold a lone surrogate (a stream cut inside an emoji, ``"\\ud800"`` sent over RPC, a
byte that was no UTF-8 kept by ``surrogateescape``). :func:`json_bytes` writes it as the escape
``\\ud800``, as ``JSON.stringify`` does, and every other character raw; :func:`well_formed` gives
the text a UTF-8 file or page can hold (each lone surrogate becomes U+FFFD, as Node writes one).
The session store and the export use both, so this module imports nothing heavy at load time.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from pi_host.loop.tools import ToolResult


def _default(value: Any) -> Any:
    if hasattr(value, "to_json"):
        return value.to_json()
    from pi_host.loop.tools import ToolResult

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
        from pi_host.protocol import event_to_wire

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
    return json_bytes(
        event_json(record),
        default=_default,
        option=orjson.OPT_APPEND_NEWLINE | orjson.OPT_PASSTHROUGH_DATACLASS,
    )


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def json_bytes(value: Any, default: Callable[[Any], Any] | None = None, option: int = 0) -> bytes:
    """Compact JSON as ``JSON.stringify`` writes it. orjson writes almost everything; what it
    refuses (a lone surrogate, an integer beyond 64 bits, nesting past 254) goes through the
    stdlib encoder, with lone surrogates escaped and NaN/Infinity as ``null``. Of orjson's
    options only ``OPT_APPEND_NEWLINE`` and ``OPT_PASSTHROUGH_DATACLASS`` are honoured there."""
    try:
        return orjson.dumps(value, default=default, option=option)
    except TypeError:  # orjson.JSONEncodeError
        pass

    def fallback(item: Any) -> Any:
        if dataclasses.is_dataclass(item) and not isinstance(item, type):
            if not option & orjson.OPT_PASSTHROUGH_DATACLASS or default is None:
                return _finite(dataclasses.asdict(item))
        if default is None:
            raise TypeError(f"Type is not JSON serializable: {type(item).__name__}")
        return _finite(default(item))

    text = json.dumps(_finite(value), ensure_ascii=False, separators=(",", ":"), default=fallback)
    if _LONE_SURROGATE.search(text):
        # Halves of a pair held as two characters are one character in JavaScript.
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
        text = _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
    data = text.encode("utf-8")
    return data + b"\n" if option & orjson.OPT_APPEND_NEWLINE else data


def _finite(value: Any) -> Any:
    """``value`` with NaN and the infinities as None (``JSON.stringify`` writes ``null``)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def well_formed(text: str) -> str:
    """``text`` as a UTF-8 file holds it: halves of a pair joined, every lone surrogate U+FFFD
    (what Node writes for a JavaScript string). The same object when there is none."""
    if not _LONE_SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
