"""Session stores built on the in-memory entry tree, for store plugins.

The interface the session needs (:class:`SessionStore`, :class:`SessionContext`,
:class:`StoreOptions`) is the kernel's (:mod:`pi_host.session.store`) and re-exported here. The
default store comes from a plugin (``register_session_stores``, JSONL files compatible with pi);
:class:`MemoryStore` here is the fallback and what ``--no-session`` uses.

A store plugin normally subclasses :class:`TreeStore`, which keeps the tree in memory
(:class:`pi_host.lib.sessions.tree.SessionTree`) and calls :meth:`TreeStore._persist` for every new
entry; the plugin only decides where the bytes go.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pi_host.lib.sessions.stubs import Stubs
from pi_host.lib.sessions.tree import (
    CONTEXT_EDIT_ROLES,
    Entry,
    SessionTree,
    TreeNode,
    bulk_allocation,
    current_system_message,
    edit_content,
    editor_text,
    fresh_id,
    interrupted_tool_result,
    navigation_target,
    uuid_text,
)
from pi_host.lib.sessions.validate import EntrySource, check_entries
from pi_host.session.store import SessionContext, SessionStore, StoreOptions  # noqa: F401 (re-exported)

if TYPE_CHECKING:
    from datetime import datetime

SESSION_VERSION = 3
SESSION_ID_PATTERN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")


def iso_timestamp(value: datetime) -> str:
    """ISO-8601 UTC with milliseconds and ``Z``, the entry timestamp format (pi's ``toISOString``)."""
    from datetime import UTC

    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def iso_now() -> str:
    """The current time as an entry timestamp (with ``time``: ``datetime`` costs ~1 ms to import)."""
    millis = time.time_ns() // 1_000_000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(millis // 1000)) + f".{millis % 1000:03d}Z"


def new_session_id() -> str:
    """A UUIDv7 (time-ordered), as pi uses for session ids."""
    import time

    ms = int(time.time() * 1000)
    rand = int.from_bytes(os.urandom(10), "big") >> 6  # 74 random bits (what secrets.randbits reads)
    value = (
        (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | (rand >> 62) << 64 | 0b10 << 62 | (rand & ((1 << 62) - 1))
    )
    return uuid_text(value)


def new_header(
    cwd: str, session_id: str | None = None, parent_session: str | None = None, timestamp: str | None = None
) -> dict[str, Any]:
    """A v3 session header (§6.2): a fresh id unless given, now unless ``timestamp``, the absolute
    ``cwd``, and ``parentSession`` for a fork or clone."""
    header: dict[str, Any] = {
        "type": "session",
        "version": SESSION_VERSION,
        "id": session_id or new_session_id(),
        "timestamp": timestamp or iso_now(),
        "cwd": os.path.abspath(cwd),
    }
    if parent_session:
        header["parentSession"] = parent_session
    return header


def check_session_id(session_id: str) -> str:
    """A custom session id must be alphanumeric with inner ``.``, ``_``, ``-`` (§6.1)."""
    if not SESSION_ID_PATTERN.match(session_id):
        raise SessionOpenError(
            f"Invalid session id {session_id!r}: use letters, digits, '.', '_' and '-', "
            "starting and ending with a letter or digit"
        )
    return session_id


def normalize_session_name(name: str) -> str:
    """Newlines become spaces, surrounding blanks go (an empty name clears it)."""
    return re.sub(r"[\r\n]+", " ", name).strip()


class SessionStoreError(Exception):
    """A store operation failed; the message is one line meant for the user."""


class SessionOpenError(SessionStoreError):
    """The requested session cannot be opened (no match, bad header, conflicting flags, in use).

    The CLI prints the message and exits 1; nothing on disk was changed.
    """


class SessionWriteError(SessionStoreError):
    """An entry could not be written; it was not added to the tree either."""


class SkipReporter:
    """Warns once per left-out entry (``<where>: skipped <type> entry <id>: field ...``), up to
    ``limit`` lines, then says once that the rest go unnamed: a file of garbage must not flood."""

    def __init__(self, warn: Callable[[str], None], locate: Callable[[int], str] | None, limit: int = 20):
        self.warn = warn
        self.locate = locate or (lambda index: f"entry {index + 1}")
        self.limit = limit
        self.count = 0

    def __call__(self, index: int, entry: Any, problem: str) -> None:
        self.count += 1
        if self.count <= self.limit:
            self.warn(f"{self.locate(index)}: skipped {_entry_name(entry)}: {problem}")
        elif self.count == self.limit + 1:
            self.warn(
                f"{self.locate(index)}: more unusable entries follow; skipping them without a warning each"
            )


def _entry_name(entry: Any) -> str:
    if not isinstance(entry, dict):
        return "entry"
    kind, entry_id = entry.get("type"), entry.get("id")
    name = f"{kind} entry" if isinstance(kind, str) and kind else "entry"
    return f"{name} {entry_id!r}" if isinstance(entry_id, str) and entry_id else name


def stderr_warn(line: str) -> None:
    """The default ``warn`` of stores: ``Warning: <line>`` on stderr."""
    import sys

    sys.stderr.write(f"Warning: {line}\n")
    sys.stderr.flush()


class TreeStore:
    """A session tree plus a persistence hook; everything but the storage medium.

    Subclasses override :meth:`_persist` (write one new entry, or raise) and may override
    :meth:`_switch_file` for fork/clone. Without overrides this is the in-memory store.
    """

    def __init__(
        self,
        cwd: str,
        session_id: str | None = None,
        *,
        header: dict[str, Any] | None = None,
        entries: list[Entry] | None = None,
        warn: Callable[[str], None] | None = None,
        source: EntrySource | None = None,
        stubs: Stubs | None = None,
    ) -> None:
        """``entries`` are loaded ones: each is checked and an unusable one is left out with a
        warning naming ``source.locate(index)`` (default ``entry <n>``), see :mod:`.validate`;
        ``stubs`` are those among them still to be decoded (:mod:`.stubs`)."""
        self.warn = warn or stderr_warn
        if header is None:
            if session_id is not None:
                check_session_id(session_id)
            header = new_header(cwd, session_id)
        self.header: dict[str, Any] = header
        self.session_id: str = header["id"]
        cwd_field = header.get("cwd")
        self.cwd: str = cwd_field if isinstance(cwd_field, str) and cwd_field else os.path.abspath(cwd)
        self.session_file: str | None = None
        if entries:
            with bulk_allocation():  # a model per message of the active context, kept for the projection
                report = SkipReporter(self.warn, source.locate if source is not None else None)
                checked = check_entries(
                    entries,
                    report,
                    source.may_be_deep if source is not None else None,
                    stubs.fill if stubs else None,
                    source.decoded() if source is not None else None,
                )
            self.tree = SessionTree(
                checked.entries, checked.projected, checked.late_check, stubs, checked.by_id
            )
            self.tree.remember_path(checked.path)
        else:
            self.tree = SessionTree()

    # --- the SessionStore interface -----------------------------------------------------------

    def append(self, entry: dict[str, Any]) -> dict[str, Any]:
        message = entry.get("message") if entry.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "custom":
            # pi stores a custom message (a plugin's, or one a run carried) as its own entry type
            entry = {"type": "custom_message", "customType": message.get("customType", "")}
            entry["content"] = message.get("content") if message.get("content") is not None else []
            entry.update({k: message[k] for k in ("display", "details") if message.get(k) is not None})
        if entry.get("type") == "compaction" and "systemMessage" not in entry:
            system = current_system_message(self.tree.project(self.warn).messages)
            if system is not None:
                entry = {**entry, "systemMessage": system}
        stored = self.tree.make_entry(entry, iso_now())
        if stored["type"] == "compaction" and isinstance(stored.get("systemMessage"), dict):
            from pi_host.lib.sessions.tree import iso_to_ms

            stored["systemMessage"] = {**stored["systemMessage"], "timestamp": iso_to_ms(stored["timestamp"])}
        self._add(stored)
        return stored

    def entries(self) -> list[dict[str, Any]]:
        return self.tree.entries()

    def leaf_id(self) -> str | None:
        return self.tree.leaf

    def branch(self, entry_id: str | None) -> None:
        self.tree.branch(entry_id)

    def build_context(self) -> SessionContext:
        projection = self.tree.project(self.warn)
        return SessionContext(projection.messages, projection.thinking_level, projection.model)

    def close(self) -> None:
        pass

    # --- more of pi's session manager --------------------------------------------------------

    def get(self, entry_id: str) -> dict[str, Any] | None:
        return self.tree.get(entry_id)

    def path(self, from_id: str | None = None) -> list[dict[str, Any]]:
        """Entries from the root to ``from_id`` (default: the leaf)."""
        return self.tree.path(... if from_id is None else from_id)

    def children(self, entry_id: str | None) -> list[dict[str, Any]]:
        return self.tree.children(entry_id)

    def entries_since(self, entry_id: str | None) -> list[dict[str, Any]]:
        """Entries after the cursor (RPC ``get_entries {since}``); KeyError for an unknown id."""
        return self.tree.entries_since(entry_id)

    def custom_entries(self, custom_type: str, branch: bool = True) -> list[Any]:
        """The ``data`` of the ``custom`` entries of ``custom_type``, oldest first, on the active
        branch (every branch when not ``branch``): what a plugin restores its state from. No
        message is decoded for it (a long resumed session keeps most of them undecoded)."""
        return [
            e.get("data") for e in self.tree.of_type("custom", branch) if e.get("customType") == custom_type
        ]

    def get_tree(self) -> list[TreeNode]:
        return self.tree.tree()

    def context_entries(self) -> list[dict[str, Any]]:
        """The compaction-aware entry list of the active branch."""
        return self.tree.context_entries()

    def reset_leaf(self) -> None:
        self.tree.branch(None)

    def label(self, entry_id: str) -> str | None:
        return self.tree.label(entry_id)

    @property
    def name(self) -> str | None:
        return self.tree.session_name()

    def append_message(self, message: Any) -> dict[str, Any]:
        from pi_host.protocol import dump_message

        return self.append({"type": "message", "message": dump_message(message)})

    def set_name(self, name: str) -> dict[str, Any]:
        return self.append({"type": "session_info", "name": normalize_session_name(name)})

    def set_label(self, target_id: str, label: str | None) -> dict[str, Any]:
        """Label an entry; an empty/None label clears it. Labels never reach the model."""
        if self.tree.get(target_id) is None:
            raise KeyError(f"Entry {target_id} not found")
        fields: dict[str, Any] = {"type": "label", "targetId": target_id}
        if label:
            fields["label"] = label
        return self.append(fields)

    def append_context_edit(self, target_id: str, replacement: dict[str, Any] | None) -> dict[str, Any]:
        """Omit (``None``) or replace (``{"content": ...}``) an earlier entry's contribution."""
        if replacement is not None and (
            not isinstance(replacement, dict) or not isinstance(replacement.get("content"), (str, list))
        ):
            raise ValueError("Context edit replacement must be null or contain string/array content")
        target = self.tree.get(target_id)
        if target is None:
            raise KeyError(f"Entry {target_id} not found")
        if not any(entry["id"] == target_id for entry in self.tree.path()):
            raise ValueError(f"Entry {target_id} is not on the active branch")
        role = target["message"].get("role") if target["type"] == "message" else "custom"
        if target["type"] not in ("message", "custom_message") or (
            target["type"] == "message" and role not in CONTEXT_EDIT_ROLES
        ):
            raise ValueError(f"Entry {target_id} does not contribute editable model content")
        if replacement is not None:
            content = edit_content(role, replacement["content"])
            if content is not replacement["content"]:
                replacement = {"content": content}
        return self.append({"type": "context_edit", "targetId": target_id, "replacement": replacement})

    def branch_with_summary(
        self,
        target_id: str | None,
        summary: str,
        details: Any = None,
        from_hook: bool | None = None,
        usage: Any = None,
    ) -> dict[str, Any]:
        """Move the leaf to ``target_id`` and record a summary of the branch left behind."""
        if target_id is not None and self.tree.get(target_id) is None:
            raise KeyError(f"Entry {target_id} not found")
        fields: dict[str, Any] = {
            "type": "branch_summary",
            "fromId": self.tree.leaf or "root",
            "summary": summary,
        }
        for key, value in (("details", details), ("usage", usage), ("fromHook", from_hook)):
            if value is not None:
                fields[key] = value
        stored = self.tree.make_entry(fields, iso_now(), parent_id=target_id)
        previous = self.tree.leaf
        self.tree.branch(target_id)
        try:
            self._add(stored)
        except Exception:
            self.tree.branch(previous)
            raise
        return stored

    def navigate(self, entry_id: str) -> str | None:
        """``/tree`` selection (§6.10): a user message or custom message moves the leaf to its
        parent and returns its text for the editor; any other entry becomes the leaf."""
        entry = self.tree.get(entry_id)
        if entry is None:
            raise KeyError(f"Entry {entry_id} not found")
        leaf, text = navigation_target(entry, self.tree.get)
        self.tree.branch(leaf)
        return text

    def fork_before(self, entry_id: str) -> str:
        """``/fork``: a new session holding the path up to the parent of this user message;
        returns the message text (for the editor)."""
        entry = self.tree.get(entry_id)
        text = editor_text(entry)
        if entry is None or entry["type"] != "message" or text is None:
            raise ValueError(f"Entry {entry_id} is not a user message")
        parent = entry.get("parentId")
        self._switch_to_branch(parent if parent and self.tree.get(parent) else None)
        return text

    def clone(self) -> str | None:
        """``/clone``: a new session holding the active path through the leaf; returns its file."""
        self._switch_to_branch(self.tree.leaf)
        return self.session_file

    def close_interrupted_tool_calls(self) -> list[dict[str, Any]]:
        """Give every tool call left without a result (the process died while it ran) an error
        result saying so. Nothing is re-run. Returns the appended entries."""
        import time

        appended = []
        for call in self.tree.dangling_tool_calls():
            result = interrupted_tool_result(call, int(time.time() * 1000))
            appended.append(self.append({"type": "message", "message": result}))
        return appended

    # --- persistence hooks -------------------------------------------------------------------

    def _add(self, entry: Entry) -> None:
        previous = self.tree.leaf
        self.tree.add(entry)
        try:
            self._persist(entry)
        except Exception:
            # Keep memory in line with storage: an unwritten entry must not become a parent.
            self.tree.undo_add(entry, previous)
            raise

    def _persist(self, entry: Entry) -> None:
        """Store one new entry (already in the tree). Raise to reject it."""

    def _switch_to_branch(self, leaf_id: str | None) -> None:
        """Replace this session by a new one holding the path to ``leaf_id`` (fork/clone)."""
        entries = self.tree.branched_entries(leaf_id, fresh_id) if leaf_id is not None else []
        self._switch_file(new_header(self.cwd, parent_session=self.session_file), entries)

    def _switch_file(self, header: dict[str, Any], entries: list[Entry]) -> None:
        self.header = header
        self.session_id = header["id"]
        self.tree.load(entries)


class MemoryStore(TreeStore):
    """Keeps the tree in memory only: ``--no-session`` and the fallback when no plugin stores."""

    def __init__(self, cwd: str, session_id: str | None = None, **kwargs: Any) -> None:
        super().__init__(cwd, session_id, **kwargs)
