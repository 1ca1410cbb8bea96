"""Checking entries that come from storage before they join a session tree (reference §6.3).

Session files are written by pi, by pi-host, by extensions and sometimes by hand, so one entry of
the wrong shape must not make a whole session unopenable, nor fail every later prompt. Each loaded
entry is checked once, here: its base fields, the fields pi defines for its type, its nesting
depth, and every message it projects into the model context, parsed *strictly* with the protocol
models (so the raw dicts that code reads directly, such as compaction's token estimates, have
exactly the types the models promise). An entry that fails is left out of the tree with one line
naming the field; the stored file is never changed.

Leaving an entry out must not cut the tree: entries whose parent was left out are re-attached to
its parent in memory (a compaction keeping from it keeps from its first remaining descendant), so
the active path, the leaf and later appends still make sense.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import itemgetter
from typing import Any, Protocol

from pi_host.lib.sessions.projection import (
    PROJECTED_TYPES,
    Entry,
    context_entries,
    path_to_root,
    projected_data,
)

MAX_DEPTH = 200
"""Deepest nesting of objects and arrays an entry may have. Serializers stop near 255 levels
(pydantic, orjson) and Python's recursion near 1000; an entry deeper than this could be loaded but
would fail later, when it is sent or copied."""

_STR = (str,)
_NUM = (int, float)
_BOOL = (bool,)
_DICT = (dict,)
_LIST = (list,)
_NULL = (type(None),)

# Per entry type: field -> (accepted JSON types, required). An optional field may also be null
# (writers differ on omitting vs. writing null); unknown fields are never checked.
ENTRY_FIELDS: dict[str, dict[str, tuple[tuple[type, ...], bool]]] = {
    "message": {"message": (_DICT, True)},
    "model_change": {"provider": (_STR, True), "modelId": (_STR, True)},
    "thinking_level_change": {"thinkingLevel": (_STR, True)},
    "usage": {
        "kind": (_STR, False),
        "provider": (_STR, False),
        "model": (_STR, False),
        "usage": (_DICT, False),
        "note": (_STR, False),
    },
    "compaction": {
        "summary": (_STR, False),
        "firstKeptEntryId": (_STR, False),
        "tokensBefore": (_NUM, False),
        "systemMessage": (_DICT, False),
        "fromHook": (_BOOL, False),
        "usage": (_DICT, False),
    },
    "branch_summary": {
        "summary": (_STR, False),
        "fromId": (_STR, False),
        "fromHook": (_BOOL, False),
        "usage": (_DICT, False),
    },
    "custom": {"customType": (_STR, False)},
    "custom_message": {
        "customType": (_STR, False),
        "content": (_STR + _LIST, False),
        "display": (_BOOL, False),
    },
    "context_edit": {"targetId": (_STR, True), "replacement": (_DICT + _NULL, True)},
    "label": {"targetId": (_STR, True), "label": (_STR, False)},
    "session_info": {"name": (_STR, False)},
}

_TYPE_WORDS = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
    dict: "an object",
    list: "an array",
    type(None): "null",
}


def describe(value: Any, limit: int = 40) -> str:
    """A short JSON rendering of ``value`` for a one-line message."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _expected(kinds: tuple[type, ...]) -> str:
    words = [_TYPE_WORDS[k] for k in kinds if not (k is float and int in kinds)]
    return " or ".join(dict.fromkeys(words))


def _is_kind(value: Any, kinds: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return bool in kinds
    if isinstance(value, float) and not math.isfinite(value):
        return False
    return isinstance(value, kinds)


def depth_exceeds(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether objects/arrays nest deeper than ``limit`` (iterative: must not recurse itself)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(node, dict):
            stack.extend((child, depth + 1) for child in node.values() if isinstance(child, (dict, list)))
        elif isinstance(node, list):
            stack.extend((child, depth + 1) for child in node if isinstance(child, (dict, list)))
    return False


def field_problem(entry: dict[str, Any]) -> str | None:
    """What is wrong with the base and type fields of an entry, as ``field <name>: <why>``."""
    kind = entry.get("type")
    if not isinstance(kind, str) or not kind:
        return f"field type: expected a non-empty string, got {describe(kind)}"
    if kind == "session":
        return "field type: a second session header (only the first line is the header)"
    entry_id = entry.get("id")
    if not isinstance(entry_id, str) or not entry_id:
        what = "missing" if "id" not in entry else f"expected a non-empty string, got {describe(entry_id)}"
        return f"field id: {what}"
    parent = entry.get("parentId")
    if parent is not None and not isinstance(parent, str):
        return f"field parentId: expected a string or null, got {describe(parent)}"
    for name, (kinds, required) in ENTRY_FIELDS.get(kind, {}).items():
        if name not in entry:
            if required:
                return f"field {name}: missing"
            continue
        value = entry[name]
        if value is None and not required:
            continue
        if not _is_kind(value, kinds):
            return f"field {name}: expected {_expected(kinds)}, got {describe(value)}"
    if kind == "context_edit" and isinstance(entry["replacement"], dict):
        content = entry["replacement"].get("content")
        if not isinstance(content, (str, list)):
            return f"field replacement.content: expected a string or an array, got {describe(content)}"
    return None


# --- messages: the protocol models, strictly -----------------------------------------------------


def _strict_parse(data: dict[str, Any]) -> Any:
    """``parse_message`` with strict types: nothing is coerced, so the stored dict already holds
    what the message holds (the legacy role and null content are normalised there first)."""
    from pi_host.protocol.messages import parse_message

    return parse_message(data, strict=True)


def _error_path(data: Any, loc: tuple[Any, ...], missing: bool) -> list[str]:
    """The JSON path of an error location: its parts that are real keys and indexes of
    ``data`` (union and tag labels such as ``str`` or ``assistant`` are dropped)."""
    parts: list[str] = []
    node = data
    for part in loc:
        if isinstance(node, dict) and isinstance(part, str) and part in node:
            parts.append(part)
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            parts.append(str(part))
            node = node[part]
    if missing and loc and isinstance(loc[-1], str):
        parts.append(loc[-1])
    return parts


_ERROR_WORDS = {
    "string_type": "a string",
    "list_type": "an array",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "a boolean",
    "none_required": "null",
}


def message_problem(prefix: str, data: dict[str, Any], exc: Exception) -> str:
    """One line for a message that does not parse: the most specific field and what it needs."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return f"field {prefix or 'entry'}: {str(exc).splitlines()[0][:120]}"
    found = []
    for error in errors(include_url=False):
        path = _error_path(data, tuple(error.get("loc", ())), error.get("type") == "missing")
        found.append((path, error))
    deepest = max(len(path) for path, _ in found)
    at = [(path, error) for path, error in found if len(path) == deepest]
    path, first = at[0]
    name = ".".join(([prefix] if prefix else []) + path) or prefix or "message"
    if first.get("type") == "missing":
        return f"field {name}: missing"
    words = [_ERROR_WORDS.get(error.get("type", "")) for _, error in at]
    if all(words):
        why = "expected " + " or ".join(dict.fromkeys(w for w in words if w))
    else:
        why = str(first.get("msg", "invalid"))[:120]
    return f"field {name}: {why}, got {describe(first.get('input'))}"


def project_strictly(entry: Entry) -> tuple[list[Any], str | None]:
    """The entry's context messages (checkpoint included) parsed strictly, or the problem."""
    models = []
    for prefix, data in projected_data(entry):
        try:
            models.append(_strict_parse(data))
        except Exception as exc:  # RecordError, or anything a message class raises
            return [], message_problem(prefix, data, exc)
    return models, None


def shape_problem(entry: Any, check_depth: bool = True) -> str | None:
    """What is wrong with an entry apart from its messages (base fields, type fields, nesting)."""
    if not isinstance(entry, dict):
        return f"not a JSON object: {describe(entry)}"
    if not check_depth and entry.get("type") == "message":
        # Nearly every entry of a long session: the checks of field_problem, inlined.
        entry_id, parent = entry.get("id"), entry.get("parentId")
        if (
            entry_id.__class__ is str
            and entry_id
            and (parent is None or parent.__class__ is str)
            and entry.get("message").__class__ is dict
        ):
            return None
    problem = field_problem(entry)
    if problem is None and check_depth and depth_exceeds(entry):
        problem = f"nested deeper than {MAX_DEPTH} levels"
    return problem


def entry_problem(entry: Any, check_depth: bool = True) -> tuple[list[Any], str | None]:
    """``(messages, problem)``: an entry's projected messages when it is usable, else why not.

    ``check_depth=False`` when the caller knows the entry is shallow (walking every entry costs
    more than parsing its messages; the JSONL reader rules most lines out by counting brackets).
    """
    problem = shape_problem(entry, check_depth)
    if problem is not None:
        return [], problem
    return project_strictly(entry)


# --- a whole session ------------------------------------------------------------------------------


class EntrySource(Protocol):
    """What a store knows about where its loaded entries came from."""

    def locate(self, index: int) -> str:
        """Where entry ``index`` is stored, for a warning (``<file>:<line>``)."""
        ...

    def may_be_deep(self, index: int) -> bool:
        """False only when entry ``index`` surely nests no deeper than :data:`MAX_DEPTH`, or is a
        message entry (whose depth is checked with its messages)."""
        ...

    def decoded(self) -> Sequence[int] | None:
        """Indexes of the entries decoded from their stored form, in order; None when that is all
        of them. The others are stubs (:mod:`.stubs`) of message entries whose shape the store
        has checked while reading: a ``message`` type, a non-empty string id, a string or null
        ``parentId`` and a ``message`` object."""
        ...


@dataclass
class Checked:
    """The usable entries of a session, in order, and what the checked ones project to (the
    tree's projection cache); ``late_check`` is for the rest (see :func:`check_entries`)."""

    entries: list[Entry] = field(default_factory=list)
    projected: dict[str, list[Any]] = field(default_factory=dict)
    late_check: Callable[[Entry], list[Any] | None] | None = None
    path: list[Entry] = field(default_factory=list)
    """The active path (root to the last entry), as the check walked it."""
    by_id: dict[str, Entry] = field(default_factory=dict)
    """``entries`` by id (for the tree to take over: nothing here uses it afterwards)."""


def check_entries(
    entries: Iterable[Any],
    report: Callable[[int, Any, str], None],
    may_be_deep: Callable[[int], bool] | None = None,
    fill: Callable[[Entry], bool] | None = None,
    decoded: Sequence[int] | None = None,
) -> Checked:
    """Keep the entries a tree can hold; ``report(index, entry, problem)`` for each left out.

    ``fill`` makes a stub entry whole before its messages are parsed (:mod:`.stubs`; False when
    its stored line does not decode). ``decoded``: see :meth:`EntrySource.decoded` (the shape of
    the other entries is not checked again).

    Every entry's shape is checked here. Messages are parsed strictly only for the entries the
    active branch's context uses (a long session holds thousands the context never reads again);
    the others are parsed when first projected, through ``Checked.late_check``, which reports a
    problem the same way and projects such an entry to nothing.

    A later entry with an id already taken is left out too (the first one keeps it, unless its
    messages turn out unusable). Entries whose parent was left out are re-attached to the nearest
    kept ancestor in memory.
    """
    checked = Checked()
    skipped_parent: dict[str, str | None] = {}
    index_of: dict[str, int] = {}
    unindexed: list[str] = []  # ids still to enter index_of (at their index), on first need
    holder = checked.by_id
    dropped: set[int] = set()  # id() of kept entries whose messages failed afterwards

    def position(entry_id: str) -> int:
        """Where a kept entry was in ``entries``; KeyError for an entry that is not kept."""
        if unindexed:
            index_of.update(zip(unindexed, range(len(unindexed)), strict=True))
            unindexed.clear()
        return index_of[entry_id]

    def skip(index: int, entry: Any, problem: str) -> None:
        report(index, entry, problem)
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            parent = entry.get("parentId")
            if entry["id"] not in holder:
                skipped_parent.setdefault(entry["id"], parent if isinstance(parent, str) else None)

    def parse(entry: Entry) -> bool:
        messages, problem = strictly(entry, fill)
        if problem is None:
            checked.projected[entry["id"]] = messages
            return True
        del holder[entry["id"]]
        dropped.add(id(entry))
        where = position(entry["id"])
        del index_of[entry["id"]]
        skip(where, entry, problem)
        return False

    entries = list(entries)  # (late_check looks entries up in it)
    ids = _all_usable(entries, decoded, may_be_deep) if decoded is not None else None
    if ids is not None:
        # The usual file: nothing to leave out. Its indexes are built in C, not entry by entry.
        holder.update(zip(ids, entries, strict=True))
        if len(holder) < len(ids):  # an id used twice: the loop below decides which one stays
            holder.clear()
            ids = None
        else:
            checked.entries = list(entries)
            unindexed.extend(ids)  # indexed only when a problem has to say where
    if ids is None:
        for index, entry in enumerate(entries):
            problem = shape_problem(entry, may_be_deep is None or may_be_deep(index))
            if problem is None and entry["id"] in holder:
                earlier = holder[entry["id"]]
                if earlier["id"] in checked.projected or parse(earlier):
                    problem = f"field id: {entry['id']!r} is already used by an earlier entry"
            if problem is not None:
                skip(index, entry, problem)
                continue
            checked.entries.append(entry)
            holder[entry["id"]] = entry
            index_of[entry["id"]] = index
    while True:
        if dropped:
            checked.entries = [e for e in checked.entries if id(e) not in dropped]
            dropped.clear()
            ids = None
        if skipped_parent:
            _reattach(checked, skipped_parent, holder)
        if ids is not None and _is_chain(checked.entries, ids):
            checked.path = list(checked.entries)  # what the walk from the last entry finds
        else:
            checked.path = path_to_root(holder.get, checked.entries[-1]["id"]) if checked.entries else []
        ids = None
        context = [e for e in context_entries(checked.path) if e["type"] in PROJECTED_TYPES]
        pending = [e for e in context if e["id"] not in checked.projected]
        if all([parse(entry) for entry in pending]):
            break

    def late_check(entry: Entry) -> list[Any] | None:
        """A loaded entry's messages parsed strictly (nothing, reported, when unusable); None for
        an entry that was not loaded here."""
        # (the tree took ``holder`` over: whether the entry was loaded here is asked of the index)
        try:
            where = position(entry["id"])
        except KeyError:
            return None
        if entries[where] is not entry:
            return None
        messages, problem = strictly(entry, fill)
        if problem is not None:
            report(where, entry, problem)
        return messages

    checked.late_check = late_check
    return checked


def _all_usable(
    entries: list[Any], decoded: Sequence[int], may_be_deep: Callable[[int], bool] | None
) -> list[str] | None:
    """The ids of ``entries`` when the shape of every decoded one is usable (the others are
    stubs, see :meth:`EntrySource.decoded`); None when any is not."""
    for index in decoded:
        if shape_problem(entries[index], may_be_deep is None or may_be_deep(index)) is not None:
            return None
    return list(map(itemgetter("id"), entries))


def _is_chain(entries: list[Entry], ids: list[str]) -> bool:
    """Whether each entry's parent is the one before it (a session never branched): the path to
    the last entry is then all of them, in order, whatever the first one's parent is (ids are
    unique). Compared in C, which is several times faster than walking the parents."""
    parents = list(map(dict.get, entries, repeat("parentId")))
    return parents[1:] == ids[:-1]


def strictly(entry: Entry, fill: Callable[[Entry], bool] | None = None) -> tuple[list[Any], str | None]:
    """:func:`project_strictly`, after the depth check a message entry skipped on load (and after
    filling it in, when it is a stub)."""
    if fill is not None and not fill(entry):
        return [], "the stored line is not valid JSON (truncated or corrupt write)"
    if entry["type"] == "message" and depth_exceeds(entry):
        return [], f"nested deeper than {MAX_DEPTH} levels"
    return project_strictly(entry)


def _reattach(checked: Checked, skipped_parent: dict[str, str | None], kept: dict[str, Entry]) -> None:

    def crossing(parent: str | None) -> tuple[str | None, list[str]]:
        """The nearest kept ancestor through left-out entries, and the left-out ids crossed."""
        crossed: list[str] = []
        while parent is not None and parent not in kept and parent in skipped_parent:
            if parent in crossed:  # a parent cycle among left-out entries
                return None, crossed
            crossed.append(parent)
            parent = skipped_parent[parent]
        return parent, crossed

    crossed_by: dict[str, list[str]] = {}
    for entry in checked.entries:
        parent = entry.get("parentId")
        if isinstance(parent, str) and parent not in kept and parent in skipped_parent:
            entry["parentId"], crossed_by[entry["id"]] = crossing(parent)
    by_id = {entry["id"]: entry for entry in checked.entries}
    for entry in checked.entries:
        first_kept = entry.get("firstKeptEntryId")
        if entry["type"] == "compaction" and first_kept in skipped_parent and first_kept not in kept:
            entry["firstKeptEntryId"] = _first_descendant(entry, first_kept, by_id, crossed_by)


def _first_descendant(
    compaction: Entry, skipped: str, by_id: dict[str, Entry], crossed_by: dict[str, list[str]]
) -> str:
    """The entry on the compaction's ancestry that was re-attached across ``skipped``: the kept
    range then starts where the left-out entry stood. The compaction itself when none is."""
    node: Entry | None = compaction
    seen: set[str] = set()
    while node is not None and node["id"] not in seen:
        seen.add(node["id"])
        if skipped in crossed_by.get(node["id"], ()):
            return node["id"]
        parent = node.get("parentId")
        node = by_id.get(parent) if isinstance(parent, str) else None
    return compaction["id"]
