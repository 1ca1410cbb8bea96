"""The active branch as compaction sees it: entries paired with the messages they project to.

The projection rules themselves live in :mod:`pi_host.lib.sessions.tree` (``context_entries``,
``projected_entries``); compaction needs them *per entry* (which entry a message came from,
which entries contribute nothing) to place a cut, and over any store, including one that offers
only the :class:`pi_host.lib.sessions.store.SessionStore` protocol. This module adapts the two.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from pi_host.lib.sessions.tree import project_entry, projected_entries, walk_to_root

Entry = dict[str, Any]


@dataclass
class ProjectedEntry:
    """A session entry with the context messages it projects to."""

    entry: Entry
    messages: list[Any] = field(default_factory=list)
    raw_roles: list[str] = field(default_factory=list)
    """Roles the entry projects to before context edits (an omitted attempt keeps its role)."""

    @property
    def id(self) -> str:
        return self.entry["id"]

    @property
    def type(self) -> str:
        return self.entry["type"]

    def roles(self) -> list[str]:
        return [getattr(m, "role", "") for m in self.messages]


def entry_getter(store: Any) -> Callable[[str], Entry | None]:
    """``id → entry`` for any store: its ``get`` when it has one, else an index of its entries."""
    getter = getattr(store, "get", None)
    if callable(getter):
        return getter
    return {e["id"]: e for e in store.entries()}.get


def walk_back(store: Any) -> Iterator[Entry]:
    """Entries from the leaf up to the root, lazily: threshold checks usually stop after a few."""
    return walk_to_root(entry_getter(store), store.leaf_id())


def path_to(store: Any, entry_id: str | None) -> list[Entry]:
    """Entries from the root down to ``entry_id``."""
    if entry_id is None:
        return []
    path = getattr(store, "path", None)
    if callable(path):
        return list(path(entry_id))
    out = list(walk_to_root(entry_getter(store), entry_id))
    out.reverse()
    return out


def branch_path(store: Any) -> list[Entry]:
    """Entries from the root to the leaf, for any store (``path()`` when it has one)."""
    path = getattr(store, "path", None)
    if callable(path):
        return list(path())
    return path_to(store, store.leaf_id())


# A compaction's system checkpoint is not history: compaction sees only its summary.
_project_for_compaction = partial(project_entry, checkpoint=False)


def project_entries(entries: list[Entry], every_compaction: bool = False) -> list[ProjectedEntry]:
    """Each entry with its messages, the latest context edit per target applied.

    A leading compaction projects to its summary only; later compactions project to nothing
    (they sit inside a retained range) unless ``every_compaction`` (a branch being summarized
    counts each compaction as its summary).
    """
    return [
        ProjectedEntry(entry, messages, [getattr(m, "role", "") for m in raw])
        for entry, raw, messages in projected_entries(
            entries, _project_for_compaction, every_compaction=every_compaction
        )
    ]
