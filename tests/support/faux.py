"""Builders for the built-in ``faux`` model's script (``PI_FAUX_SCRIPT``, or
``pi_provider_faux.set_responses`` in process): one dict per model call, in order.

    script = [tool_call("bash", command="echo hi"), text("done: {{lastToolResult}}")]
"""

from __future__ import annotations

from typing import Any


def text(answer: str, **extra: Any) -> dict[str, Any]:
    """An answer (``{{lastToolResult}}`` and ``{{userMessages}}`` are filled in by the model);
    ``extra`` adds fields such as ``thinking``, ``delayMs``, ``chunkSize``, ``usage``."""
    return {"text": answer, **extra}


def tool_call(name: str, call_id: str | None = None, text: str = "", **arguments: Any) -> dict[str, Any]:
    """One call of tool ``name`` with ``arguments`` (and ``text`` before it)."""
    call: dict[str, Any] = {"name": name, "arguments": arguments}
    if call_id is not None:
        call["id"] = call_id
    response: dict[str, Any] = {"toolCalls": [call]}
    if text:
        response["text"] = text
    return response


def tool_calls(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """Several calls in one answer: ``tool_calls(("read", {"path": "a"}), ("ls", {}))``."""
    return {"toolCalls": [{"name": name, "arguments": arguments} for name, arguments in calls]}


def error(message: str, **extra: Any) -> dict[str, Any]:
    """A call that ends in a provider error with ``message``."""
    return {"error": message, **extra}


def slow(answer: str, delay_ms: int, chunk_size: int = 8) -> dict[str, Any]:
    """An answer streamed ``chunk_size`` characters every ``delay_ms`` milliseconds."""
    return {"text": answer, "delayMs": delay_ms, "chunkSize": chunk_size}
