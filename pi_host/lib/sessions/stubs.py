"""Entries loaded as stubs and filled in from their stored line on first use.

Resuming a long session reads tens of megabytes, most of it tool output the context no longer
holds (it sits before the latest compaction, or on another branch). A store may hand the tree a
*stub* for such an entry: a real dict with what the tree itself reads (``type``, ``id``,
``parentId``, ``timestamp``, the message's ``role``), plus where its line is. The tree fills
a stub in place (same dict object, so every index and path holding it sees the full entry)
before it projects the entry or hands it to anyone; decoding happens only then.

A reader keeps the blocks it read rather than copying each line out of them: a stub is its
position in ``entries``, the offset of its line in a block, and the block. What a reader does per
line is two list appends; the lookup from an entry to its position is built (in C) on first use.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable
from typing import Any, Protocol

Entry = dict[str, Any]


class Block(Protocol):
    """A block a reader read: ``bytes``, or anonymous memory (``mmap.mmap``)."""

    def find(self, sub: bytes, start: int = ..., /) -> int: ...

    def __getitem__(self, index: slice, /) -> bytes: ...

    def __len__(self) -> int: ...


class Stubs:
    """The stub entries of one loaded session and the lines to fill them from.

    ``entries[i]``'s line starts at ``starts[i]`` in the block of the last ``(first, block)`` of
    ``blocks`` with ``first <= i``, and ends at the next newline (or the end of that block).
    """

    def __init__(
        self,
        parse: Callable[[bytes], Any],
        entries: list[Entry] | None = None,
        starts: list[int] | None = None,
        blocks: list[tuple[int, Block]] | None = None,
    ) -> None:
        self._parse = parse
        self._entries: list[Any] = [] if entries is None else entries  # (None once filled)
        self._starts = [] if starts is None else starts
        self._firsts: list[int] = []
        self._blocks: list[Block] = []
        blocks = blocks or []
        for number, (first, block) in enumerate(blocks):
            after = blocks[number + 1][0] if number + 1 < len(blocks) else len(self._entries)
            if first < after:  # (a block that holds no stub is let go of)
                self._firsts.append(first)
                self._blocks.append(block)
        self._position: dict[int, int] | None = None  # id(entry) -> its index, once needed
        self._left: list[int] = []  # per block: its stubs not filled yet
        self._broken: dict[int, Entry] = {}

    def add(self, entry: Entry, line: bytes) -> None:
        """One more stub, filled from ``line``."""
        if self._position is not None:
            self._position[id(entry)] = len(self._entries)
            self._left.append(1)
        self._firsts.append(len(self._entries))
        self._blocks.append(line)
        self._entries.append(entry)
        self._starts.append(0)

    def __len__(self) -> int:
        return len(self._entries) if self._position is None else len(self._position)

    def _positions(self) -> dict[int, int]:
        if self._position is None:
            self._position = dict(zip(map(id, self._entries), range(len(self._entries)), strict=True))
            ends = [*self._firsts[1:], len(self._entries)]
            self._left = [end - first for first, end in zip(self._firsts, ends, strict=True)]
        return self._position

    def fill(self, entry: Entry) -> bool:
        """Make ``entry`` whole (a no-op for one that is not a stub); False when its line does not
        decode to the same entry (the stub then stays as it is)."""
        index = self._positions().pop(id(entry), None) if self._entries else None
        if index is None:
            return id(entry) not in self._broken
        full = self._parse(self._take(index))
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

    def _take(self, index: int) -> bytes:
        """Stub ``index``'s line, letting go of the stub (and of its block, once it has none)."""
        which = bisect_right(self._firsts, index) - 1
        block = self._blocks[which]
        start = self._starts[index]
        end = block.find(b"\n", start)
        line = block[start : end if end >= 0 else len(block)]
        self._entries[index] = None
        self._left[which] -= 1
        if not self._left[which]:
            self._blocks[which] = b""
        if not self._position:  # every stub filled: nothing to keep
            self._entries, self._starts, self._firsts, self._blocks, self._left = [], [], [], [], []
            self._position = None
        return line

    def fill_all(self, entries: Iterable[Entry]) -> None:
        if self._entries:
            position = self._positions()
            for entry in entries:
                if id(entry) in position:
                    self.fill(entry)
