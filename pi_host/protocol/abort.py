"""Cancellation shared by the loop, providers and tools (pi's AbortSignal).

An :class:`AbortController` owns one :class:`AbortSignal`; aborting it wakes every waiter and runs
the registered callbacks once. Code that awaits something slow races it against the signal with
:func:`race`, so an abort ends an HTTP stream or a subprocess wait promptly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")


class AbortError(Exception):
    """Raised where work stops because its signal was aborted."""

    def __init__(self, reason: str = "Operation aborted") -> None:
        super().__init__(reason)


class AbortSignal:
    __slots__ = ("aborted", "reason", "_callbacks", "_event")

    def __init__(self) -> None:
        self.aborted = False
        self.reason: str | None = None
        self._callbacks: list[Callable[[], Any]] = []
        self._event: asyncio.Event | None = None

    def add_listener(self, callback: Callable[[], Any]) -> Callable[[], None]:
        """Call ``callback`` on abort (at once if already aborted); returns an unsubscribe."""
        if self.aborted:
            callback()
            return lambda: None
        self._callbacks.append(callback)

        def remove() -> None:
            try:
                self._callbacks.remove(callback)
            except ValueError:
                pass

        return remove

    async def wait(self) -> None:
        """Return once the signal is aborted."""
        if self.aborted:
            return
        if self._event is None:
            self._event = asyncio.Event()
        await self._event.wait()

    def throw_if_aborted(self) -> None:
        if self.aborted:
            raise AbortError(self.reason or "Operation aborted")

    def _fire(self, reason: str | None) -> None:
        if self.aborted:
            return
        self.aborted = True
        self.reason = reason
        if self._event is not None:
            self._event.set()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback()
            except Exception:  # a listener's failure must not stop the others
                pass


class AbortController:
    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: str | None = None) -> None:
        self.signal._fire(reason)


NEVER = AbortSignal()
"""A signal that is never aborted, for callers without cancellation."""


async def race(signal: AbortSignal | None, awaitable: Awaitable[T]) -> T:
    """Await ``awaitable`` unless ``signal`` aborts first; then cancel it and raise AbortError."""
    if signal is None or signal is NEVER:
        return await awaitable
    signal.throw_if_aborted()
    task = asyncio.ensure_future(awaitable)
    remove = signal.add_listener(task.cancel)
    try:
        return await task
    except asyncio.CancelledError:
        if signal.aborted:
            raise AbortError(signal.reason or "Operation aborted") from None
        raise
    finally:
        remove()
