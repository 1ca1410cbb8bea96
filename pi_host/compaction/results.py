"""Reading what strategies and hooks return: a dict (``{"summary": ...}``) or any object with the
same attributes (a dataclass, a pydantic model), possibly awaitable."""

from __future__ import annotations

import inspect
from typing import Any


async def maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def field_of(result: Any, name: str) -> Any:
    """``result[name]`` for a dict, else the attribute (None when missing)."""
    return result.get(name) if isinstance(result, dict) else getattr(result, name, None)


def json_value(value: Any) -> Any:
    """A model as pi JSON (``to_json()``); anything else as it is."""
    return value.to_json() if hasattr(value, "to_json") else value


def summary_of(result: Any) -> dict[str, Any] | None:
    """``{summary, details, usage}`` when ``result`` carries a non-blank summary text, else None."""
    summary = field_of(result, "summary")
    if not isinstance(summary, str) or not summary.strip():
        return None
    return {"summary": summary, "details": field_of(result, "details"), "usage": field_of(result, "usage")}
