"""pi-host's values as the JSON extensions see (pi's field names), and back.

Events carry pi-host's objects: messages and models (pydantic models with ``to_json``),
dataclasses (a compaction's preparation: snake_case fields become pi's camelCase), abort
signals (sent as ``{"$signal": id}``, which the bridge turns into an ``AbortSignal``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

SignalId = Callable[[Any], int]


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def to_wire(value: Any, signal_id: SignalId | None = None) -> Any:
    """A JSON-ready copy of ``value`` (unknown objects become None)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): to_wire(v, signal_id) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_wire(v, signal_id) for v in value]
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_wire(to_json(), signal_id)
    if type(value).__name__ == "AbortSignal":
        return {"$signal": signal_id(value)} if signal_id is not None else None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            camel(f.name): to_wire(getattr(value, f.name), signal_id)
            for f in dataclasses.fields(value)
            if not f.name.startswith("_")
        }
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return to_wire(dump(by_alias=True, exclude_none=True), signal_id)
    if isinstance(value, bytes):
        import base64

        return base64.b64encode(value).decode("ascii")
    return None
