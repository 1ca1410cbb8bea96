"""The format-independent session tree (reference §6.3-§6.5, §6.10).

A session is a list of *entries* (dicts with pi's field names: ``type``, ``id``, ``parentId``,
``timestamp`` plus the type's fields) that form a tree through ``parentId``. The *leaf* is where
the next entry goes; the *path* is the chain from the leaf up to a root; the model context is a
projection of that path (compaction, branch summaries, custom messages, context edits applied).

Every store keeps its entries in a :class:`SessionTree`: the JSONL store, the in-memory store of
``--no-session`` and any other store a plugin provides. Entries are kept as the plain dicts read
from (or written to) the file, never copied; the projection turns message dicts into protocol
models once and caches them per entry, so rebuilding the context twice costs one parse.

The projection rules live in :mod:`pi_host.lib.sessions.projection` (:func:`context_entries`,
:func:`project_entry`, :func:`apply_context_edit`, :func:`projected_entries`, :func:`walk_to_root`,
:func:`editor_text`, :func:`navigation_target`...) and are re-exported here; :func:`fresh_id`
and :func:`bulk_allocation` are this module's own.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Container, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

# The projection rules, re-exported: stores and compaction import them from here too.
from pi_host.lib.sessions.projection import (  # noqa: F401
    CONTEXT_EDIT_ROLES,
    INTERRUPTED_TOOL_TEXT,
    PROJECTED_TYPES,
    Entry,
    apply_context_edit,
    context_entries,
    current_system_message,
    edit_content,
    editor_text,
    interrupted_tool_result,
    iso_to_ms,
    latest_context_edits,
    navigation_target,
    path_to_root,
    project_entry,
    projected_entries,
    session_info_name,
    walk_to_root,
)
from pi_host.lib.sessions.stubs import Stubs


def uuid_text(value: int) -> str:
    """``str(uuid.UUID(int=value))`` without importing ``uuid``: it imports ``platform``, ~3 ms
    of every run's start-up for two format calls."""
    digits = f"{value:032x}"
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def random_uuid() -> str:
    """A random (version 4) UUID, as ``str(uuid.uuid4())``."""
    value = int.from_bytes(os.urandom(16), "big")
    value = (value & ~(0xF000 << 64) | 0x4000 << 64) & ~(0xC000 << 48) | 0x8000 << 48
    return uuid_text(value)


def fresh_id(taken: Container[str]) -> str:
    """8 hex chars of a random UUID not in ``taken``, re-drawn on collision (100 tries, then a
    full UUID). A UUID4's first four bytes are all random, so they are drawn directly."""
    for _ in range(100):
        candidate = os.urandom(4).hex()
        if candidate not in taken:
            return candidate
    return random_uuid()


@contextmanager
def bulk_allocation() -> Iterator[None]:
    """Build many long-lived objects (a loaded session) without the cyclic GC in the way.

    The collector is paused while they are made, then they are *frozen* (moved to the permanent
    generation): otherwise the first collection after re-enabling, and every full collection
    after it, would walk the whole history again only to find it alive. Frozen objects are
    still freed by reference counting; only cyclic garbage among them would stay.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


@dataclass
class TreeNode:
    """One entry in :meth:`SessionTree.tree` with its children (oldest first) and label."""

    entry: Entry
    children: list[TreeNode] = field(default_factory=list)
    label: str | None = None
    label_timestamp: str | None = None

    def to_json(self) -> dict[str, Any]:
        """pi's tree node shape ``{entry, children, label?, labelTimestamp?}`` (RPC ``get_tree``)."""
        out: dict[str, Any] = {"entry": self.entry, "children": [child.to_json() for child in self.children]}
        if self.label is not None:
            out["label"] = self.label
        if self.label_timestamp is not None:
            out["labelTimestamp"] = self.label_timestamp
        return out


@dataclass
class Projection:
    """The model context of a path plus the settings restored from it."""

    messages: list[Any]
    thinking_level: str
    model: dict[str, str] | None
    entries: list[Entry]
    """The entries the messages came from (compaction first when there is one)."""


def _is_conversation(entry: Entry) -> bool:
    if entry.get("type") != "message":
        return False
    message = entry.get("message")
    return isinstance(message, dict) and message.get("role") in ("user", "assistant")


def _settings_of(path: list[Entry], stubs: Stubs | None = None) -> tuple[str, dict[str, Any] | None]:
    """The thinking level and model in force at the end of ``path``: the latest
    ``thinking_level_change``, and the latest ``model_change`` or assistant message (searched
    from the end: a long path has both near its end)."""
    thinking_level: str | None = None
    model: dict[str, Any] | None | Any = ...
    for entry in reversed(path):
        kind = entry["type"]
        if kind == "thinking_level_change" and thinking_level is None:
            thinking_level = entry.get("thinkingLevel") or "off"
        elif kind == "model_change" and model is ...:
            model = {"provider": entry.get("provider"), "modelId": entry.get("modelId")}
        elif kind == "message" and model is ...:
            if stubs is not None and entry["message"].get("role") == "assistant":
                stubs.fill(entry)
            message = entry.get("message")
            if isinstance(message, dict) and message.get("role") == "assistant":
                provider, model_id = message.get("provider"), message.get("model")
                # pi would look up a missing name and find nothing; say so with None
                ok = isinstance(provider, str) and isinstance(model_id, str) and provider and model_id
                model = {"provider": provider, "modelId": model_id} if ok else None
        if thinking_level is not None and model is not ...:
            break
    return thinking_level or "off", None if model is ... else model


class SessionTree:
    """Entries indexed by id, the leaf, labels, and the context projection."""

    def __init__(
        self,
        entries: Iterable[Entry] = (),
        projected: dict[str, list[Any]] | None = None,
        late_check: Callable[[Entry], list[Any] | None] | None = None,
        stubs: Stubs | None = None,
        by_id: dict[str, Entry] | None = None,
    ) -> None:
        self._entries: list[Entry] = []
        self._by_id: dict[str, Entry] = {}
        self._leaf: str | None = None
        self._labels: dict[str, tuple[str, str | None]] = {}
        self._parsed: dict[str, Any] = {}
        self._projection_key: tuple[Any, ...] | None = None
        self._projection: Projection | None = None
        self.load(entries, projected, late_check, stubs, by_id)

    # --- building ---------------------------------------------------------------------------

    def load(
        self,
        entries: Iterable[Entry],
        projected: dict[str, list[Any]] | None = None,
        late_check: Callable[[Entry], list[Any] | None] | None = None,
        stubs: Stubs | None = None,
        by_id: dict[str, Entry] | None = None,
    ) -> None:
        """Replace the content; the leaf becomes the last entry in order (§6.4: not persisted).

        The entries must be valid (:func:`pi_host.lib.sessions.validate.check_entries`);
        ``projected`` (id → messages, as that check parsed them) seeds the projection cache and
        ``late_check`` projects the entries it left unparsed (None: :func:`project_entry`).
        ``stubs`` are entries still to be decoded (:mod:`.stubs`): every entry handed out is
        filled first, and the tree reads no more of a stub than its type, ids and role.
        ``by_id``: the entries by id, as the check built it (taken over, not copied).
        """
        self._late_check = late_check
        self._stubs = stubs if stubs else None
        self._entries = list(entries)
        self._labels = {}
        self._parsed = dict(projected) if projected else {}
        self._projection = None
        self._path: list[Entry] = []
        # Built in C (map, zip, ``in``): a long session has tens of thousands of entries.
        if by_id is None:
            by_id = dict(zip(map(itemgetter("id"), self._entries), self._entries, strict=True))
        self._by_id = by_id
        self._leaf = self._entries[-1]["id"] if self._entries else None
        if "label" in map(itemgetter("type"), self._entries):
            for entry in self._entries:
                if entry["type"] == "label":
                    self._index_label(entry)

    def new_id(self) -> str:
        """A fresh entry id for this tree (:func:`fresh_id`)."""
        return fresh_id(self._by_id)

    def make_entry(self, fields: Entry, timestamp: str, parent_id: Any = ...) -> Entry:
        """A full entry for ``fields`` (``type`` plus the type's fields) as a child of the leaf."""
        entry: Entry = {
            "type": fields["type"],
            "id": self.new_id(),
            "parentId": self._leaf if parent_id is ... else parent_id,
            "timestamp": timestamp,
        }
        for key, value in fields.items():
            if key not in ("type", "id", "parentId", "timestamp"):
                entry[key] = value
        if entry["type"] == "compaction" and not entry.get("firstKeptEntryId"):
            entry["firstKeptEntryId"] = entry["id"]  # retain-none (§6.3)
        return entry

    def add(self, entry: Entry) -> None:
        """Index a complete entry and move the leaf to it."""
        self._entries.append(entry)
        self._by_id[entry["id"]] = entry
        self._leaf = entry["id"]
        if entry["type"] == "label":
            self._index_label(entry)

    def undo_add(self, entry: Entry, previous_leaf: str | None) -> None:
        """Forget the last added entry (its write failed), restoring the previous leaf."""
        if self._entries and self._entries[-1] is entry:
            self._entries.pop()
            self._by_id.pop(entry["id"], None)
            self._path = []
            self._leaf = previous_leaf
            if entry["type"] == "label":
                self._labels = {}
                for other in self._entries:
                    if other["type"] == "label":
                        self._index_label(other)

    def _index_label(self, entry: Entry) -> None:
        target = entry.get("targetId")
        label = entry.get("label")
        if not isinstance(target, str):
            return
        if label:
            self._labels[target] = (label, entry.get("timestamp"))
        else:
            self._labels.pop(target, None)

    # --- queries ----------------------------------------------------------------------------

    @property
    def leaf(self) -> str | None:
        return self._leaf

    def entries(self) -> list[Entry]:
        return self._filled(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, entry_id: str) -> Entry | None:
        entry = self._by_id.get(entry_id)
        if entry is not None:
            self._fill(entry)
        return entry

    def _fill(self, entry: Entry) -> None:
        if self._stubs is not None:
            self._stubs.fill(entry)

    def _filled(self, entries: list[Entry]) -> list[Entry]:
        if self._stubs is not None:
            self._stubs.fill_all(entries)
            if not self._stubs:
                self._stubs = None
        return entries

    def has_conversation(self) -> bool:
        return any(_is_conversation(entry) for entry in self._entries)

    def branch(self, entry_id: str | None) -> None:
        """Move the leaf; ``None`` makes the next entry a new root."""
        if entry_id is not None and entry_id not in self._by_id:
            raise KeyError(f"Entry {entry_id} not found")
        self._leaf = entry_id

    def path(self, from_id: str | None | Any = ...) -> list[Entry]:
        """Entries from a root down to ``from_id`` (default: the leaf)."""
        return self._filled(self._raw_path(from_id))

    def remember_path(self, path: list[Entry]) -> None:
        """Seed the path cache with the path to the leaf a loader has already walked."""
        if path and path[-1]["id"] == self._leaf:
            self._path = path

    def _raw_path(self, from_id: str | None | Any = ...) -> list[Entry]:
        """:meth:`path` with stubs left as they are (for the tree's own walks)."""
        target = self._leaf if from_id is ... else from_id
        cached = self._path
        if cached and target is not None:
            # The usual step: the leaf moved to a child of the last path asked for (an append).
            last = cached[-1]
            if last["id"] == target:
                return list(cached)
            entry = self._by_id.get(target)
            if entry is not None and entry.get("parentId") == last["id"] and entry is not last:
                cached.append(entry)
                return list(cached)
        out = path_to_root(self._by_id.get, target)
        self._path = out
        return list(out)

    def of_type(self, kind: str, branch: bool = True) -> list[Entry]:
        """The entries of type ``kind`` on the path to the leaf (of every branch when not
        ``branch``), in order. Only ``message`` entries are ever stubs: for any other type
        nothing is decoded, however long the session."""
        found = [entry for entry in (self._raw_path() if branch else self._entries) if entry["type"] == kind]
        return self._filled(found) if kind == "message" else found

    def entries_since(self, entry_id: str | None) -> list[Entry]:
        """Entries appended after ``entry_id`` (all of them for None); KeyError if unknown."""
        if entry_id is None:
            return list(self._entries)
        if entry_id not in self._by_id:
            raise KeyError(f"Entry not found: {entry_id}")
        for index in range(len(self._entries) - 1, -1, -1):
            if self._entries[index]["id"] == entry_id:
                return self._filled(self._entries[index + 1 :])
        return []

    def children(self, entry_id: str | None) -> list[Entry]:
        return self._filled([e for e in self._entries if e.get("parentId") == entry_id])

    def label(self, entry_id: str) -> str | None:
        found = self._labels.get(entry_id)
        return found[0] if found else None

    def labels(self) -> dict[str, str]:
        return {target: label for target, (label, _ts) in self._labels.items()}

    def session_name(self) -> str | None:
        """The latest ``session_info`` name (an empty one clears it)."""
        for entry in reversed(self._entries):
            if entry["type"] == "session_info":
                return session_info_name(entry)
        return None

    def tree(self) -> list[TreeNode]:
        """Roots (``parentId`` null, self-parented or missing parent), children oldest first."""
        nodes: dict[str, TreeNode] = {}
        for entry in self._filled(list(self._entries)):
            found = self._labels.get(entry["id"])
            nodes[entry["id"]] = TreeNode(
                entry, label=found[0] if found else None, label_timestamp=found[1] if found else None
            )
        roots: list[TreeNode] = []
        for entry in self._entries:
            node = nodes[entry["id"]]
            parent = entry.get("parentId")
            if parent is None or parent == entry["id"] or parent not in nodes:
                roots.append(node)
            else:
                nodes[parent].children.append(node)
        stack = list(roots)
        while stack:  # iterative: deep trees must not overflow the stack
            node = stack.pop()
            node.children.sort(key=lambda child: iso_to_ms(child.entry.get("timestamp")))
            stack.extend(node.children)
        return roots

    # --- context projection -----------------------------------------------------------------

    def context_entries(self, path: list[Entry] | None = None) -> list[Entry]:
        """The path (default: the active one) with the latest compaction applied (§6.5 step 3)."""
        return self._filled(context_entries(self._raw_path() if path is None else path))

    def project(self, warn: Callable[[str], None] | None = None) -> Projection:
        """The context of the current path; cached until the tree or the leaf changes."""
        key = (self._leaf, len(self._entries))
        if self._projection is None or self._projection_key != key:
            # Building tens of thousands of models would trigger many full collections that only
            # find live objects; pausing the collector makes the projection several times faster.
            with bulk_allocation():
                self._projection = self._build_projection(warn)
            self._projection_key = key
        cached = self._projection
        return Projection(list(cached.messages), cached.thinking_level, cached.model, list(cached.entries))

    def _build_projection(self, warn: Callable[[str], None] | None) -> Projection:
        path = self._raw_path()
        thinking_level, model = _settings_of(path, self._stubs)
        messages: list[Any] = []
        sources: list[Entry] = []

        def project(entry: Entry) -> list[Any]:
            return self._project_entry(entry, warn)

        for entry, _raw, projected in projected_entries(self.context_entries(path), project, warn):
            if projected:
                messages.extend(projected)
                sources.append(entry)
        return Projection(messages, thinking_level, model, sources)

    def _project_entry(self, entry: Entry, warn: Callable[[str], None] | None) -> list[Any]:
        """:func:`project_entry`, parsed once per entry for the life of the tree."""
        if entry["type"] not in PROJECTED_TYPES:
            return []
        cached = self._parsed.get(entry["id"])
        if cached is None and self._late_check is not None:
            cached = self._late_check(entry)
        if cached is None:
            cached = project_entry(entry, warn)
        self._parsed[entry["id"]] = cached
        return list(cached)

    # --- crash recovery ---------------------------------------------------------------------

    def dangling_tool_calls(self) -> list[Any]:
        """Tool calls of the path's last assistant message that have no result yet.

        Only when nothing but tool results (and non-message entries) follows that message: a
        process that died while tools ran. Error/aborted responses never ran their calls.
        """
        path = self._raw_path()
        answered: set[str] = set()
        for entry in reversed(path):
            self._fill(entry)
            if entry["type"] != "message":
                if entry["type"] in ("custom_message", "branch_summary", "compaction"):
                    return []
                continue
            message = entry.get("message")
            if not isinstance(message, dict):
                return []
            role = message.get("role")
            if role == "toolResult":
                call_id = message.get("toolCallId")
                if isinstance(call_id, str):
                    answered.add(call_id)
                continue
            if role != "assistant" or message.get("stopReason") in ("error", "aborted"):
                return []
            calls = [
                block
                for block in message.get("content") or ()
                if isinstance(block, dict)
                and block.get("type") == "toolCall"
                and isinstance(block.get("id"), str)
            ]
            return [call for call in calls if call["id"] not in answered]
        return []

    # --- branched copies (fork / clone, §6.10) ---------------------------------------------

    def branched_entries(self, leaf_id: str | None, new_id: Callable[[set[str]], str]) -> list[Entry]:
        """The path to ``leaf_id`` for a new file: labels dropped from the chain and re-appended at
        the end (one per labelled entry on the path), compaction ``firstKeptEntryId`` remapped."""
        path = self.path(leaf_id)
        out: list[Entry] = []
        replaced_label: dict[str, str] = {}
        pending_labels: list[str] = []
        parent: str | None = None
        for entry in path:
            if entry["type"] == "label":
                pending_labels.append(entry["id"])
                continue
            for label_id in pending_labels:
                replaced_label[label_id] = entry["id"]
            pending_labels.clear()
            copy = dict(entry)
            copy["parentId"] = parent
            if entry["type"] == "compaction":
                first = entry.get("firstKeptEntryId")
                if first != entry["id"]:
                    copy["firstKeptEntryId"] = replaced_label.get(first, first)
            out.append(copy)
            parent = entry["id"]
        ids = {entry["id"] for entry in out}
        for target, (label, timestamp) in self._labels.items():
            if target in ids:
                label_id = new_id(ids)
                ids.add(label_id)
                out.append(
                    {
                        "type": "label",
                        "id": label_id,
                        "parentId": parent,
                        "timestamp": timestamp,
                        "targetId": target,
                        "label": label,
                    }
                )
                parent = label_id
        return out
