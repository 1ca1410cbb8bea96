"""How a session's entries become the model context (reference §6.5), entry by entry.

The rules :class:`pi_host.lib.sessions.tree.SessionTree` applies to its active path, public so
that code working over any store applies the same ones: compaction places its cut on them, the
JSONL store dates and names with them. Each rule exists once, here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from operator import itemgetter
from typing import Any

Entry = dict[str, Any]

CONTEXT_EDIT_ROLES = frozenset({"user", "assistant", "toolResult"})
"""Message roles a ``context_edit`` may target (besides ``custom_message`` entries)."""

INTERRUPTED_TOOL_TEXT = (
    "Tool execution was interrupted: the process ended before this tool call finished, so it has "
    "no result. It was not run again; run it again if it is still needed."
)


def iso_to_ms(value: Any) -> int:
    """ISO entry timestamp → ms (how pi dates projected custom/summary messages); 0 when unparsable
    (or not finite: a hand-edited ``1e400`` must not stop a sort)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value) if math.isfinite(value) else 0
    if not isinstance(value, str):
        return 0
    from datetime import datetime  # only sessions with summaries or custom messages get here

    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    except (ValueError, OverflowError):
        return 0


def _is_system(entry: Entry) -> bool:
    message = entry.get("message")
    return entry["type"] == "message" and isinstance(message, dict) and message.get("role") == "system"


def _short(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]


def walk_to_root(get: Callable[[str], Entry | None], start: str | None) -> Iterator[Entry]:
    """Entries from ``start`` up to its root, lazily, looked up with ``get`` (any id → entry map).

    Stops at a missing parent, a self-parented entry or a parent cycle (a hand-edited file must
    not hang us): every entry is yielded at most once.
    """
    node = get(start) if start else None
    seen: set[str] = set()
    while node is not None:
        node_id = node["id"]
        if node_id in seen:
            return
        seen.add(node_id)
        yield node
        parent = node.get("parentId")
        node = get(parent) if parent else None


def path_to_root(get: Callable[[str], Entry | None], start: str | None) -> list[Entry]:
    """``list(walk_to_root(get, start))``, reversed (root first), without a generator step per
    entry: a long session's path is tens of thousands of entries."""
    out: list[Entry] = []
    seen: set[str] = set()
    node = get(start) if start else None
    while node is not None:
        node_id = node["id"]
        if node_id in seen:
            break
        seen.add(node_id)
        out.append(node)
        parent = node.get("parentId")
        node = get(parent) if parent else None
    out.reverse()
    return out


def context_entries(path: list[Entry]) -> list[Entry]:
    """``path`` (root → leaf) with its latest compaction applied (§6.5 step 3).

    Without a compaction that is the path itself (a copy). With one: the compaction first, then
    the entries from its ``firstKeptEntryId`` up to it minus system messages (the compaction's
    checkpoint replaces them), then everything after it.
    """
    index = next((i for i in range(len(path) - 1, -1, -1) if path[i]["type"] == "compaction"), -1)
    if index < 0:
        return list(path)
    compaction = path[index]
    kept: list[Entry] = [compaction]
    try:  # (searched in C: the kept range is usually a few entries at the end of a long path)
        start = list(map(itemgetter("id"), path[:index])).index(compaction.get("firstKeptEntryId"))
    except ValueError:
        start = index
    kept.extend(entry for entry in path[start:index] if not _is_system(entry))
    kept.extend(path[index + 1 :])
    return kept


PROJECTED_TYPES = frozenset({"message", "custom_message", "branch_summary", "compaction"})
"""Entry types that may contribute messages to the model context."""


def project_entry(
    entry: Entry, warn: Callable[[str], None] | None = None, *, checkpoint: bool = True
) -> list[Any]:
    """One entry → its context messages as protocol models, before context edits (§6.5 step 4).

    A ``compaction`` projects to its system checkpoint (when it has one and ``checkpoint`` is
    true) and its summary; a ``branch_summary`` without text and other entry types to nothing.
    Never raises: an entry this version cannot read contributes nothing (``warn`` says which).
    """
    global _parse_message
    if _parse_message is None:
        from pi_host.protocol import parse_message as _parse_message
    try:
        return [_parse_message(data) for _field, data in projected_data(entry, checkpoint)]
    except Exception as exc:  # a message this version cannot read must not stop the load
        if warn is not None:
            warn(f"skipping unreadable {entry['type']} entry {entry['id']}: {_short(exc)}")
        return []


_parse_message: Callable[[dict[str, Any]], Any] | None = None


def projected_data(entry: Entry, checkpoint: bool = True) -> list[tuple[str, dict[str, Any]]]:
    """The messages an entry projects to, as pi JSON dicts, each with the entry field it comes
    from (``message``, ``systemMessage``, or ``""`` for the entry's own fields).

    Values are passed through as stored (absent ones get pi's defaults) so that a strict parse of
    these dicts checks the entry itself: the loader's validation and the projection share them.
    """
    kind = entry["type"]
    if kind == "message":  # the hot path when resuming a long session: keep it short
        message = entry.get("message")
        return [("message", message)] if isinstance(message, dict) else []
    if kind == "custom_message":
        content = entry.get("content")
        data = {
            "role": "custom",
            "customType": entry.get("customType") or "",
            "content": [] if content is None else content,
            "display": True if entry.get("display") is None else entry["display"],
            "timestamp": iso_to_ms(entry.get("timestamp")),
        }
        if entry.get("details") is not None:
            data["details"] = entry["details"]
        return [("", data)]
    if kind == "branch_summary":
        if not entry.get("summary"):
            return []
        summary = {"role": "branchSummary", "summary": entry["summary"], "fromId": entry.get("fromId")}
        return [("", {**summary, "timestamp": iso_to_ms(entry.get("timestamp"))})]
    if kind == "compaction":
        out: list[tuple[str, dict[str, Any]]] = []
        system = entry.get("systemMessage")
        if checkpoint and isinstance(system, dict):
            out.append(("systemMessage", system))
        summary = entry.get("summary")
        data = {
            "role": "compactionSummary",
            "summary": "" if summary is None else summary,
            "tokensBefore": entry.get("tokensBefore") or 0,
            "timestamp": iso_to_ms(entry.get("timestamp")),
        }
        out.append(("", data))
        return out
    return []


def latest_context_edits(entries: Iterable[Entry]) -> dict[str, Entry]:
    """The last ``context_edit`` entry per target id among ``entries`` (the one that counts)."""
    edits: dict[str, Entry] = {}
    for entry in entries:
        if entry["type"] == "context_edit" and isinstance(entry.get("targetId"), str):
            edits[entry["targetId"]] = entry
    return edits


def apply_context_edit(
    messages: list[Any], replacement: Any, warn: Callable[[str], None] | None = None
) -> list[Any]:
    """An entry's messages after a ``context_edit`` with this ``replacement``.

    ``None`` omits them; ``{"content": ...}`` replaces the content of its user, assistant,
    toolResult and custom messages, keeping role and metadata (a string becomes one text block
    for assistant and toolResult). An unusable replacement leaves the message as it was.
    """
    if replacement is None:
        return []
    if not isinstance(replacement, dict) or "content" not in replacement:
        return messages
    from pi_host.protocol import parse_message

    out = []
    for message in messages:
        role = getattr(message, "role", None)
        if role not in CONTEXT_EDIT_ROLES and role != "custom":
            out.append(message)
            continue
        data = message.to_json()
        data["content"] = edit_content(role, replacement["content"])
        try:
            out.append(parse_message(data))
        except Exception as exc:
            if warn is not None:
                warn(f"ignoring unusable context edit: {_short(exc)}")
            out.append(message)
    return out


def edit_content(role: Any, content: Any) -> Any:
    """Replacement content as a message of ``role`` holds it: assistant and toolResult content is
    a block list, so a string becomes one text block there."""
    if role in ("assistant", "toolResult") and isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content


def projected_entries(
    entries: list[Entry],
    project: Callable[[Entry], list[Any]] | None = None,
    warn: Callable[[str], None] | None = None,
    *,
    every_compaction: bool = False,
) -> Iterator[tuple[Entry, list[Any], list[Any]]]:
    """``(entry, raw messages, messages)`` for each of ``entries`` (a :func:`context_entries`
    list), the latest context edit per target applied to ``messages``.

    ``project`` turns one entry into its raw messages (default :func:`project_entry`). A
    compaction after the first entry projects to nothing (an older compaction inside a kept
    range) unless ``every_compaction`` (a branch being summarized counts each as its summary).
    """
    project = project or project_entry
    edits = latest_context_edits(entries)
    for index, entry in enumerate(entries):
        if entry["type"] == "compaction" and index > 0 and not every_compaction:
            yield entry, [], []
            continue
        raw = project(entry)
        messages = raw
        edit = edits.get(entry["id"]) if raw else None
        if edit is not None:
            messages = apply_context_edit(raw, edit.get("replacement"), warn)
        yield entry, raw, messages


def session_info_name(entry: Entry) -> str | None:
    """The name a ``session_info`` entry sets: stripped, and None (cleared) when empty."""
    name = entry.get("name")
    return name.strip() or None if isinstance(name, str) else None


def editor_text(entry: Entry | None) -> str | None:
    """The editable text of a user message or custom message entry, else None.

    Selecting such an entry in ``/tree`` (or ``/fork`` before it) puts this text in the editor.
    """
    if entry is None:
        return None
    if entry["type"] == "message":
        message = entry.get("message") or {}
        if message.get("role") != "user":
            return None
        content = message.get("content")
    elif entry["type"] == "custom_message":
        content = entry.get("content")
    else:
        return None
    if isinstance(content, str):
        return content
    return "".join(
        b.get("text", "") for b in content or () if isinstance(b, dict) and b.get("type") == "text"
    )


def navigation_target(entry: Entry, get: Callable[[str], Entry | None]) -> tuple[str | None, str | None]:
    """Where ``/tree`` selection of ``entry`` moves the leaf, and the text for the editor (§6.10).

    A user or custom message moves the leaf to its parent (``None``: a new root) and hands its
    text back; any other entry becomes the leaf itself, with no text.
    """
    text = editor_text(entry)
    if text is None:
        return entry["id"], None
    parent = entry.get("parentId")
    return (parent if parent and get(parent) is not None else None), text


def current_system_message(messages: list[Any]) -> dict[str, Any] | None:
    """All system messages of a context replayed into one (the compaction checkpoint, §7.5)."""
    from pi_host.protocol.transcript import replay_system

    if not any(getattr(m, "role", None) == "system" for m in messages):
        return None
    state = replay_system(messages)
    message: dict[str, Any] = {"role": "system", "content": "\n\n".join(c for c in state.contents if c)}
    message["sections"] = dict(state.sections)
    message["toolsAdded"] = [tool.to_json() for tool in state.tools.values()]
    return message


def interrupted_tool_result(call: dict[str, Any], timestamp_ms: int) -> dict[str, Any]:
    """The error result closing a tool call whose process died (pi JSON of a toolResult)."""
    return {
        "role": "toolResult",
        "toolCallId": call["id"],
        "toolName": call.get("name") or "",
        "content": [{"type": "text", "text": INTERRUPTED_TOOL_TEXT}],
        "isError": True,
        "timestamp": timestamp_ms,
    }
