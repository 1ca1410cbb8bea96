"""The small interface between the session layer and whatever stores a session.

The session layer appends *entries* (pi's session-file entry shapes, reference §6.3, as dicts with
pi's field names) and asks the store to rebuild the model context from the active branch. The
default store comes from a plugin (``register_session_stores``, JSONL files compatible with pi);
:class:`MemoryStore` here is the fallback and what ``--no-session`` style callers can use.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol


def iso_now() -> str:
    """ISO-8601 UTC with milliseconds and ``Z``, the entry timestamp format."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def new_session_id() -> str:
    """A UUIDv7 (time-ordered), as pi uses for session ids."""
    import secrets
    import time

    ms = int(time.time() * 1000)
    rand = secrets.randbits(74)
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | (rand >> 62) << 64 | 0b10 << 62 | (rand & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


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
    extra: dict[str, Any] = field(default_factory=dict)


class SessionStore(Protocol):
    session_id: str
    session_file: str | None
    cwd: str

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


class MemoryStore:
    """Keeps entries in memory: a linear-or-branching tree with no file."""

    def __init__(self, cwd: str, session_id: str | None = None) -> None:
        self.cwd = os.path.abspath(cwd)
        self.session_id = session_id or new_session_id()
        self.session_file: str | None = None
        self.header = {"type": "session", "version": 3, "id": self.session_id, "timestamp": iso_now(), "cwd": self.cwd}
        self._entries: list[dict[str, Any]] = []
        self._by_id: dict[str, dict[str, Any]] = {}
        self._leaf: str | None = None

    def _new_id(self) -> str:
        for _ in range(100):
            candidate = uuid.uuid4().hex[:8]
            if candidate not in self._by_id:
                return candidate
        return str(uuid.uuid4())

    def append(self, entry: dict[str, Any]) -> dict[str, Any]:
        stored = {"type": entry["type"], "id": self._new_id(), "parentId": self._leaf, "timestamp": iso_now()}
        stored.update((k, v) for k, v in entry.items() if k != "type")
        self._entries.append(stored)
        self._by_id[stored["id"]] = stored
        self._leaf = stored["id"]
        return stored

    def entries(self) -> list[dict[str, Any]]:
        return list(self._entries)

    def get(self, entry_id: str) -> dict[str, Any] | None:
        return self._by_id.get(entry_id)

    def leaf_id(self) -> str | None:
        return self._leaf

    def branch(self, entry_id: str | None) -> None:
        if entry_id is not None and entry_id not in self._by_id:
            raise KeyError(f"Entry not found: {entry_id}")
        self._leaf = entry_id

    def path(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        node = self._by_id.get(self._leaf) if self._leaf else None
        seen: set[str] = set()
        while node is not None and node["id"] not in seen:
            seen.add(node["id"])
            out.append(node)
            parent = node.get("parentId")
            node = self._by_id.get(parent) if parent else None
        out.reverse()
        return out

    def build_context(self) -> SessionContext:
        """A plain projection (messages, custom messages, model and thinking level).

        Compaction-aware projection belongs to the session-store plugin; this fallback treats
        the path as a flat list of messages.
        """
        from pi_host.protocol import CustomMessage, parse_message

        context = SessionContext()
        for entry in self.path():
            kind = entry["type"]
            if kind == "message":
                message = entry["message"]
                context.messages.append(parse_message(message) if isinstance(message, dict) else message)
            elif kind == "custom_message":
                context.messages.append(
                    CustomMessage(
                        custom_type=entry["customType"],
                        content=entry["content"],
                        display=entry.get("display", True),
                        details=entry.get("details"),
                    )
                )
            elif kind == "thinking_level_change":
                context.thinking_level = entry["thinkingLevel"]
            elif kind == "model_change":
                context.model = {"provider": entry["provider"], "modelId": entry["modelId"]}
        return context

    def close(self) -> None:
        pass
