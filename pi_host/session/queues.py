"""Steering and follow-up queues (reference §4.4): messages typed while a run streams.

``steer`` messages enter after the current tool batch, ``followUp`` ones only when the run would
otherwise stop. The session mirrors both as text lists in ``queue_update`` events.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass
class QueuedMessage:
    message: Any
    text: str


class PromptQueues:
    def __init__(self, changed: Callable[[list[str], list[str]], None]) -> None:
        self.steering: list[QueuedMessage] = []
        self.follow_up: list[QueuedMessage] = []
        self._changed = changed

    def __bool__(self) -> bool:
        return bool(self.steering or self.follow_up)

    def add(self, queue: list[QueuedMessage], message: Any, text: str) -> None:
        queue.append(QueuedMessage(message, text))
        self._notify()

    def take(self, queue: list[QueuedMessage], mode: str) -> list[Any]:
        """The next messages of ``queue``: one (``one-at-a-time``) or all (``all``)."""
        if not queue:
            return []
        taken = queue[:] if mode == "all" else queue[:1]
        del queue[: len(taken)]
        self._notify()
        return [q.message for q in taken]

    def pending_messages(self) -> list[Any]:
        """Every queued message, steering first (what a boundary's context preview lists)."""
        return [q.message for q in (*self.steering, *self.follow_up)]

    def clear(self) -> dict[str, list[str]]:
        cleared = {"steering": [q.text for q in self.steering], "followUp": [q.text for q in self.follow_up]}
        self.steering.clear()
        self.follow_up.clear()
        self._notify()
        return cleared

    def _notify(self) -> None:
        self._changed([q.text for q in self.steering], [q.text for q in self.follow_up])
