"""Entries loaded as stubs and filled in from their stored line on first use.

Resuming a long session reads tens of megabytes, most of it tool output the context no longer
holds (it sits before the latest compaction, or on another branch). A store may hand the tree a
*stub* for such an entry: a real dict with what the tree itself reads (``type``, ``id``,
``parentId``, ``timestamp``, the message's ``role``), plus the line it came from. The tree fills
a stub in place (same dict object, so every index and path holding it sees the full entry)
before it projects the entry or hands it to anyone; decoding happens only then.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

Entry = dict[str, Any]


class Stubs:
    """The stub entries of one loaded session and the lines to fill them from."""

    def __init__(self, parse: Callable[[bytes], Any]) -> None:
        self._parse = parse
        self._lines: dict[int, tuple[Entry, bytes]] = {}  # id(entry) -> (entry, its line)
        self._broken: dict[int, Entry] = {}

    def add(self, entry: Entry, line: bytes) -> None:
        self._lines[id(entry)] = (entry, line)

    def __len__(self) -> int:
        return len(self._lines)

    def fill(self, entry: Entry) -> bool:
        """Make ``entry`` whole (a no-op for one that is not a stub); False when its line does not
        decode to the same entry (the stub then stays as it is)."""
        found = self._lines.pop(id(entry), None) if self._lines else None
        if found is None:
            return id(entry) not in self._broken
        full = self._parse(found[1])
        if (
            not isinstance(full, dict)
            or full.get("id") != entry["id"]
            or full.get("type") != entry["type"]
            or not isinstance(full.get("message"), dict)
        ):
            self._broken[id(entry)] = entry
            return False
        parent = entry.get("parentId")  # the loader may have re-attached it in memory
        entry.clear()
        entry.update(full)
        entry["parentId"] = parent
        return True

    def fill_all(self, entries: Iterable[Entry]) -> None:
        if self._lines:
            for entry in entries:
                if id(entry) in self._lines:
                    self.fill(entry)
