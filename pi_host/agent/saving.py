"""Writing finished messages to the session's store without letting a write failure end a run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class MessageSaver:
    """Appends each finished message as a ``message`` entry. A store that cannot write (a full
    disk, a file that went away) raises; the conversation goes on in memory, the failure is said
    once (again only when it changes), and what the store already holds stays a valid tree."""

    def __init__(self, store: Callable[[], Any], warn: Callable[[str], None]) -> None:
        self._store = store
        self._warn = warn
        self._failure = ""

    def save(self, message: Any) -> str | None:
        """The new entry's id, or None when it could not be written."""
        try:
            stored = self._store().append({"type": "message", "message": message.to_json()})
        except Exception as exc:  # noqa: BLE001 - any store's failure: the run must end normally
            if str(exc) != self._failure:
                self._warn(f"{exc} (messages are not saved until the file can be written again)")
            self._failure = str(exc)
            return None
        self._failure = ""
        return stored.get("id") if isinstance(stored, dict) else None
