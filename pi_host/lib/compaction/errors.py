"""Errors of the compaction mechanism. Messages are pi's where pi defines them (§7.7)."""

from __future__ import annotations


class CompactionError(Exception):
    """Compaction did not happen; the message is one line for the user."""


class CompactionCancelled(CompactionError):
    """A plugin cancelled, or the compaction was aborted (message ``Compaction cancelled``)."""

    def __init__(self, message: str = "Compaction cancelled") -> None:
        super().__init__(message)
