"""What the session needs of the thing that stores it (reference §6).

The session appends *entries* (pi's session-file entry shapes, reference §6.3, as dicts with
pi's field names) and asks the store to rebuild the model context from the active branch. Store
plugins (``register_session_stores``) implement :class:`SessionStore`, usually on top of
:class:`pi_host.lib.sessions.store.TreeStore`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class SessionContext:
    """The projection of the active branch: what the model sees, and the restored settings."""

    messages: list[Any] = field(default_factory=list)
    thinking_level: str = "off"
    model: dict[str, str] | None = None
    """``{"provider", "modelId"}`` from the last model change or assistant message."""


@dataclass
class StoreOptions:
    """How the CLI/SDK asked to open a session (reference §6.8)."""

    cwd: str
    agent_dir: str
    session_dir: str | None = None
    session: str | None = None
    """``--session <path|id prefix>``."""
    continue_recent: bool = False
    fork: str | None = None
    session_id: str | None = None
    no_session: bool = False
    name: str | None = None
    resume: bool = False
    """``-r``: pick a session (a terminal asks; without one the newest is listed to choose)."""
    interactive: bool = False
    """A terminal is attached, so the store may ask questions."""
    warn: Callable[[str], None] | None = None
    """Where one-line warnings go (default: ``Warning: ...`` on stderr)."""
    session_dir_setting: str | None = None
    """The ``sessionDir`` setting (relative to the project)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Options of a store plugin's own."""


class SessionStore(Protocol):
    session_id: str
    session_file: str | None
    cwd: str
    header: dict[str, Any]

    def append(self, entry: dict[str, Any]) -> dict[str, Any]:
        """Add an entry (``type`` plus its fields) as a child of the leaf; fills ``id``,
        ``parentId`` and ``timestamp``; moves the leaf to it; returns the stored entry."""

    def entries(self) -> list[dict[str, Any]]:
        """All entries in append order (no header)."""

    def leaf_id(self) -> str | None: ...

    def branch(self, entry_id: str | None) -> None:
        """Move the leaf (``None``: the next append starts a new root)."""

    def build_context(self) -> SessionContext: ...

    def close(self) -> None: ...
