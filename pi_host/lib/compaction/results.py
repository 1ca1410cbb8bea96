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


async def strategy_summary(
    strategy: Any,
    method: str,
    preparation: Any,
    ctx: Any,
    *,
    failed: str,
    empty: str,
    on_error: Any = None,
) -> dict[str, Any]:
    """Run ``strategy.<method>(preparation, ctx)`` and return :func:`summary_of` its result.

    Aborts and :class:`CompactionError` pass through; any other exception is handed to
    ``on_error(strategy, method, exc)`` (which names the plugin) and becomes a
    :class:`CompactionError` with ``failed`` (``{name}`` and ``{error}`` filled in), a result
    without a summary one with ``empty`` (``{name}``).
    """
    from pi_host.lib.compaction.errors import CompactionError
    from pi_host.protocol.abort import AbortError

    name = repr(strategy.name)
    try:
        result = await maybe_await(getattr(strategy, method)(preparation, ctx))
    except (AbortError, CompactionError):
        raise
    except Exception as exc:
        if on_error is not None:
            on_error(strategy, method, exc)
        raise CompactionError(failed.format(name=name, error=exc)) from exc
    found = summary_of(result)
    if found is None:
        raise CompactionError(empty.format(name=name))
    return found
