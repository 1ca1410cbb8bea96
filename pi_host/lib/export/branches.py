"""The entry tree of an export: roots, children in time order, the active path, display indents.

Entries are never modified (the interactive ``/export`` passes the live store's dicts). Each entry
gets a *key*: its id, or a made-up one when the id is missing or already taken, so every entry has
one element in the page. Parent links follow pi's rules (reference §6.4): no parent, a parent of
its own id or an unknown parent make a root; cycles, which pi's writer never produces, are broken
at the first entry of the cycle in file order so nothing disappears from the tree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Node:
    key: str
    entry: dict[str, Any]
    parent: str | None = None
    children: list[str] = field(default_factory=list)
    indent: int = 0
    """Display depth in the sidebar: one more only below a branch point, so a long linear
    conversation stays flat while every fork is visible."""


class Branches:
    def __init__(self, entries: list[dict[str, Any]]) -> None:
        self.nodes: dict[str, Node] = {}
        self._by_entry_id: dict[str, str] = {}
        for index, entry in enumerate(e for e in entries if isinstance(e, dict)):
            raw = entry.get("id")
            key = raw if isinstance(raw, str) and raw and raw not in self.nodes else f"entry-{index + 1}"
            while key in self.nodes:
                key += "_"
            self.nodes[key] = Node(key, entry)
            if isinstance(raw, str):
                self._by_entry_id.setdefault(raw, key)
        self.order: list[str] = []
        """Keys in sidebar order: depth first, children oldest first."""
        self._link()

    def _link(self) -> None:
        wanted: dict[str, str | None] = {}
        for key, node in self.nodes.items():
            parent = node.entry.get("parentId")
            target = self._by_entry_id.get(parent) if isinstance(parent, str) else None
            wanted[key] = target if target != key else None
        children: dict[str | None, list[str]] = {}
        for key, parent in wanted.items():
            children.setdefault(parent, []).append(key)
        for kids in children.values():
            kids.sort(key=lambda k: _timestamp(self.nodes[k].entry))  # stable: ties keep file order
        seen: set[str] = set()
        starts = list(children.get(None, []))
        pending = iter(self.nodes)
        while True:
            for root in starts:
                self._walk(root, children, seen)
            # Whatever is still unseen hangs off a cycle: start again from its first entry.
            starts = [next((k for k in pending if k not in seen), None)]
            if starts[0] is None:
                break

    def _walk(self, root: str, children: dict[str | None, list[str]], seen: set[str]) -> None:
        # Iterative: a long session is a chain far deeper than Python's recursion limit.
        stack: list[tuple[str, str | None, int]] = [(root, None, 0)]
        while stack:
            key, parent, indent = stack.pop()
            if key in seen:
                continue
            seen.add(key)
            node = self.nodes[key]
            node.parent, node.indent = parent, indent
            if parent is not None:
                self.nodes[parent].children.append(key)
            self.order.append(key)
            kids = [k for k in children.get(key, []) if k not in seen]
            below = indent + 1 if len(kids) > 1 else indent
            stack.extend((kid, key, below) for kid in reversed(kids))

    def key_of(self, entry_id: str | None) -> str | None:
        """The key of the entry with this id, or None when there is no such entry."""
        if entry_id is None:
            return None
        return self._by_entry_id.get(entry_id) or (entry_id if entry_id in self.nodes else None)

    def default_leaf(self) -> str | None:
        """pi's leaf on load: the last entry in file order."""
        return next(reversed(self.nodes), None)

    def path_to(self, key: str | None) -> list[str]:
        """Keys from the root down to ``key`` (empty for None)."""
        path: list[str] = []
        while key is not None:
            path.append(key)
            key = self.nodes[key].parent
        path.reverse()
        return path


def _timestamp(entry: dict[str, Any]) -> str:
    value = entry.get("timestamp")
    return value if isinstance(value, str) else ""
