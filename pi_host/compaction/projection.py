"""The active branch as compaction sees it: entries paired with the messages they project to.

The session tree (``pi_host.session_tree``) owns the real projection; compaction needs the same
rules *per entry* (which entry a message came from, which entries contribute nothing) to place a
cut, so this module applies them entry by entry (reference §6.5): the latest compaction first,
then its retained tail minus system messages, then everything after it, with the latest
``context_edit`` per target applied.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

Entry = dict[str, Any]


@dataclass
class ProjectedEntry:
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


def branch_path(store: Any) -> list[Entry]:
    """Entries from the root to the leaf, for any store (``path()`` when it has one)."""
    path = getattr(store, "path", None)
    if callable(path):
        return list(path())
    by_id = {e["id"]: e for e in store.entries()}
    out: list[Entry] = []
    node = by_id.get(store.leaf_id() or "")
    while node is not None and len(out) <= len(by_id):
        out.append(node)
        parent = node.get("parentId")
        node = by_id.get(parent) if parent and parent != node["id"] else None
    out.reverse()
    return out


def walk_back(store: Any) -> Iterator[Entry]:
    """Entries from the leaf up to the root, lazily: threshold checks usually stop after a few."""
    getter = getattr(store, "get", None)
    if not callable(getter):
        yield from reversed(branch_path(store))
        return
    leaf = store.leaf_id()
    node = getter(leaf) if leaf else None
    seen: set[str] = set()
    while node is not None and node["id"] not in seen:  # a parent cycle must not hang us
        seen.add(node["id"])
        yield node
        parent = node.get("parentId")
        node = getter(parent) if parent else None


def path_to(store: Any, entry_id: str | None) -> list[Entry]:
    """Entries from the root down to ``entry_id``."""
    if entry_id is None:
        return []
    path = getattr(store, "path", None)
    if callable(path):
        return list(path(entry_id))
    by_id = {e["id"]: e for e in store.entries()}
    out: list[Entry] = []
    node = by_id.get(entry_id)
    while node is not None and len(out) <= len(by_id):
        out.append(node)
        parent = node.get("parentId")
        node = by_id.get(parent) if parent and parent != node["id"] else None
    out.reverse()
    return out


def context_entries(path: list[Entry]) -> list[Entry]:
    """The path with its latest compaction applied (§6.5 step 3)."""
    index = next((i for i in range(len(path) - 1, -1, -1) if path[i]["type"] == "compaction"), -1)
    if index < 0:
        return list(path)
    compaction = path[index]
    first_kept = compaction.get("firstKeptEntryId")
    out = [compaction]
    found = False
    for entry in path[:index]:
        if not found and entry["id"] == first_kept:
            found = True
        if found and not _is_system(entry):
            out.append(entry)
    out.extend(path[index + 1 :])
    return out


def _is_system(entry: Entry) -> bool:
    message = entry.get("message")
    return entry["type"] == "message" and isinstance(message, dict) and message.get("role") == "system"


def project_entry(entry: Entry) -> list[Any]:
    """What one entry contributes to the model context (before context edits)."""
    from pi_host.protocol import (
        BranchSummaryMessage,
        CompactionSummaryMessage,
        CustomMessage,
        parse_message,
    )
    from pi_host.session_tree import iso_to_ms

    kind = entry["type"]
    try:
        if kind == "message":
            message = entry.get("message")
            return [parse_message(message)] if isinstance(message, dict) else []
        if kind == "custom_message":
            content = entry.get("content")
            return [
                CustomMessage(
                    custom_type=entry.get("customType") or "",
                    content=[] if content is None else content,
                    display=bool(entry.get("display", True)),
                    details=entry.get("details"),
                    timestamp=iso_to_ms(entry.get("timestamp")),
                )
            ]
        if kind == "branch_summary" and entry.get("summary"):
            return [
                BranchSummaryMessage(
                    summary=entry["summary"],
                    from_id=entry.get("fromId"),
                    timestamp=iso_to_ms(entry.get("timestamp")),
                )
            ]
        if kind == "compaction":
            return [
                CompactionSummaryMessage(
                    summary=entry.get("summary") or "",
                    tokens_before=int(entry.get("tokensBefore") or 0),
                    timestamp=iso_to_ms(entry.get("timestamp")),
                )
            ]
    except ValueError:  # an entry this version cannot read contributes nothing (the tree warns)
        return []
    return []


def _apply_edit(messages: list[Any], replacement: Any) -> list[Any]:
    if replacement is None:
        return []
    if not isinstance(replacement, dict) or "content" not in replacement:
        return messages
    from pi_host.protocol import parse_message

    out = []
    for message in messages:
        role = getattr(message, "role", None)
        if role not in ("user", "assistant", "toolResult", "custom"):
            out.append(message)
            continue
        content = replacement["content"]
        if role in ("assistant", "toolResult") and isinstance(content, str):
            content = [{"type": "text", "text": content}]
        data = message.to_json()
        data["content"] = content
        try:
            out.append(parse_message(data))
        except ValueError:
            out.append(message)
    return out


def project_entries(entries: list[Entry], every_compaction: bool = False) -> list[ProjectedEntry]:
    """Each entry with its messages, the latest context edit per target applied.

    A leading compaction projects to its summary only (its system checkpoint is not history);
    later compactions project to nothing (they sit inside a retained range) unless
    ``every_compaction`` (a branch being summarized counts each compaction as its summary).
    """
    edits: dict[str, Entry] = {}
    for entry in entries:
        if entry["type"] == "context_edit" and isinstance(entry.get("targetId"), str):
            edits[entry["targetId"]] = entry
    out = []
    for index, entry in enumerate(entries):
        if entry["type"] == "compaction" and index > 0 and not every_compaction:
            out.append(ProjectedEntry(entry))  # an older compaction inside the kept range
            continue
        messages = project_entry(entry)
        raw_roles = [getattr(m, "role", "") for m in messages]
        edit = edits.get(entry["id"])
        if edit is not None and messages:
            messages = _apply_edit(messages, edit.get("replacement"))
        out.append(ProjectedEntry(entry, messages, raw_roles))
    return out
