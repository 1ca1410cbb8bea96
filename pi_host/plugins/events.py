"""The event bus every plugin of a host shares (pi's ``pi.events``): ``emit(name, data)`` calls
each ``on(name, handler)`` handler in subscription order."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any


class EventBus:
    """One per host: ``emit(name, data)`` calls every ``on(name, handler)`` handler in the order
    they subscribed. A raising handler (or an async one that fails later) is reported as a failure
    of the plugin that subscribed it, and the other handlers still run."""

    def __init__(self, host: Any) -> None:
        self._host = host
        self._handlers: dict[str, list[tuple[Callable[[Any], Any], str]]] = {}

    def on(self, name: str, handler: Callable[[Any], Any], *, owner: str | None = None) -> Callable[[], None]:
        """Subscribe; returns the function that unsubscribes (calling it twice is harmless)."""
        item = (handler, owner or self._owner_of(handler))
        self._handlers.setdefault(name, []).append(item)

        def unsubscribe() -> None:
            handlers = self._handlers.get(name, [])
            if item in handlers:
                handlers.remove(item)

        return unsubscribe

    def emit(self, name: str, data: Any = None) -> None:
        for handler, owner in list(self._handlers.get(name, ())):
            try:
                result = handler(data)
            except Exception as exc:
                self._host.report(owner, f"events:{name}", exc)
                continue
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                task.add_done_callback(lambda t, o=owner: self._finished(t, o, name))

    def _finished(self, task: asyncio.Future[Any], owner: str, name: str) -> None:
        if not task.cancelled() and task.exception() is not None:
            self._host.report(owner, f"events:{name}", task.exception())  # type: ignore[arg-type]

    def _owner_of(self, handler: Callable[..., Any]) -> str:
        module = getattr(handler, "__module__", None) or "?"
        names = {record.name for record in getattr(self._host, "records", ())}
        for candidate in (module, module.rpartition(".")[2], module.partition(".")[0]):
            if candidate in names:
                return candidate
        return module
