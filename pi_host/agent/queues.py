"""Steering and follow-up queues (reference §4.4): messages typed while a run streams.

``steer`` messages enter after the current tool batch, ``followUp`` ones only when the run would
otherwise stop. An agent owns one pair; the coding agent's session mirrors both as text lists in
``queue_update`` events.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass
class QueuedMessage:
    """A message waiting for the agent (steering or follow-up), with the text the queue shows
    for it."""

    message: Any
    text: str


class PromptQueues:
    def __init__(self, changed: Callable[[list[str], list[str]], None]) -> None:
        self.steering: list[QueuedMessage] = []
        self.follow_up: list[QueuedMessage] = []
        self._changed = changed
        self._taken: list[tuple[bool, QueuedMessage]] = []
        """Taken by the loop but not started yet (steering or not): still shown as queued, as pi
        shows a message until its ``message_start``."""

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
        # announced as each one starts (:meth:`started`), so the queue_update follows turn_start
        self._taken.extend((queue is self.steering, q) for q in taken)
        return [q.message for q in taken]

    def started(self, message: Any) -> None:
        """``message`` starts (its ``message_start``): it leaves the lists shown as queued."""
        for index, (_, queued) in enumerate(self._taken):
            if queued.message is message:
                del self._taken[index]
                self._notify()
                return

    def settle(self) -> None:
        """The run ended: a taken message that never started is no longer shown as queued."""
        if self._taken:
            self._taken.clear()
            self._notify()

    def pending_messages(self) -> list[Any]:
        """Every queued message, steering first (what a boundary's context preview lists)."""
        return [q.message for q in (*self.steering, *self.follow_up)]

    def clear(self) -> dict[str, list[str]]:
        steering, follow_up = self._shown()
        cleared = {"steering": steering, "followUp": follow_up}
        self.steering.clear()
        self.follow_up.clear()
        self._taken.clear()
        self._notify()
        return cleared

    def _shown(self) -> tuple[list[str], list[str]]:
        steering = [q.text for is_steering, q in self._taken if is_steering]
        follow_up = [q.text for is_steering, q in self._taken if not is_steering]
        return steering + [q.text for q in self.steering], follow_up + [q.text for q in self.follow_up]

    def _notify(self) -> None:
        self._changed(*self._shown())
