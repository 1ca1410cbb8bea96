"""What the session needs of the thing that stores it (reference §6).

The session appends *entries* (pi's session-file entry shapes, reference §6.3, as dicts with
pi's field names) and asks the store to rebuild the model context from the active branch. Store
plugins (``register_session_stores``) implement :class:`SessionStore`, usually on top of
:class:`pi_host.lib.sessions.store.TreeStore`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


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


@runtime_checkable
class TreeSessionStore(SessionStore, Protocol):
    """A store that keeps pi's session tree (every built-in store does,
    :class:`pi_host.lib.sessions.store.TreeStore`): what ``ctx``, ``/tree``, ``/fork``, labels and
    names use. A store without it still runs sessions; those features then say they are missing
    or fall back to the entry list. Check with ``isinstance(store, TreeSessionStore)``."""

    name: str | None
    """The session's name (the latest ``session_info`` entry)."""

    def get(self, entry_id: str) -> dict[str, Any] | None:
        """The entry with this id (any branch), or None."""

    def path(self) -> list[dict[str, Any]]:
        """The entries from the root to the leaf (the active branch)."""

    def context_entries(self) -> list[dict[str, Any]]:
        """The active branch's entries that make the model's context (after the last compaction)."""

    def get_tree(self) -> list[Any]:
        """The roots of the session tree (nodes with ``entry``, ``children``, ``label``)."""

    def set_label(self, entry_id: str, label: str | None) -> Any:
        """Label an entry (None or empty clears it); KeyError for an unknown id."""

    def label(self, entry_id: str) -> str | None: ...

    def set_name(self, name: str) -> dict[str, Any]:
        """Name the session (an empty name clears it); the ``session_info`` entry written."""

    def fork_before(self, entry_id: str) -> str:
        """Continue in a new file holding the branch before the user message ``entry_id``; its text."""

    def clone(self) -> None:
        """Continue in a new file holding the active branch."""

    def custom_entries(self, custom_type: str, branch: bool = True) -> list[Any]:
        """The ``data`` of the ``custom`` entries of ``custom_type``, oldest first, on the active
        branch (every branch when not ``branch``), without decoding any message."""
