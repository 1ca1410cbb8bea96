"""The one error an export raises: its message is a sentence for the user, shown as is."""

from __future__ import annotations


class ExportError(Exception):
    """The session could not be exported (unreadable source, not a session, unwritable output)."""
