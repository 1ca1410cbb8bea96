"""The stream a request returns: iterate it for the unified events, or await :meth:`result`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from pi_host.protocol.messages import AssistantMessage
from pi_host.protocol.stream import ErrorEvent

__all__ = ["AssistantMessageStream", "error_stream"]


class AssistantMessageStream:
    """``start``, block events (``text_delta``, ``thinking_delta``, ``toolcall_delta``...), then
    exactly one ``done`` or ``error``. A failure never raises: it ends the stream with ``error``,
    whose message carries ``stop_reason`` ``error``/``aborted`` and ``error_message``."""

    def __init__(self, events: AsyncIterator[Any]) -> None:
        self._events = events
        self._result: AssistantMessage | None = None

    def __aiter__(self) -> AssistantMessageStream:
        return self

    async def __anext__(self) -> Any:
        event = await self._events.__anext__()
        if event.type == "done":
            self._result = event.message
        elif event.type == "error":
            self._result = event.error
        return event

    async def result(self) -> AssistantMessage:
        """The final message (reading what is left of the stream first)."""
        async for _event in self:
            pass
        if self._result is None:
            raise RuntimeError("the provider stream ended without a done or error event")
        return self._result

    async def aclose(self) -> None:
        close = getattr(self._events, "aclose", None)
        if close is not None:
            await close()


async def error_stream(model: Any, text: str) -> AsyncIterator[Any]:
    """A request that fails before it starts: one ``error`` event, as pi's collection does."""
    message = AssistantMessage(
        api=getattr(model, "api", ""),
        provider=getattr(model, "provider", ""),
        model=getattr(model, "id", ""),
        stop_reason="error",
        error_message=text,
    )
    yield ErrorEvent(reason="error", error=message)
