"""The bulk paths of loading a session give what the entry-by-entry ones give.

* ``check_entries`` with ``decoded`` (the store vouches for its stubs' shape) checks only those
  entries one by one and builds its indexes in C when nothing is to be left out, and finds the
  path without walking it when the session never branched;
* ``SessionTree.load`` builds its index in C, or takes the check's over;
* ``context_entries`` finds the start of a compaction's kept range in C.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_host.lib.sessions.projection import _is_system, context_entries
from pi_host.lib.sessions.tree import SessionTree
from pi_host.lib.sessions.validate import check_entries
from tests.support.budget import examples
from tests.support.fuzz_sessions import FUZZ, JSON, valid_entries
from tests.support.session_files import assistant, entry, user


@st.composite
def loaded(draw) -> list[Any]:
    """Entries as a store hands them over: valid ones (a chain, or branched), maybe an id used
    twice, maybe something unusable."""
    entries: list[Any] = draw(valid_entries(12))
    if draw(st.booleans()):  # never branched
        for before, after in zip(entries, entries[1:], strict=False):
            after["parentId"] = before["id"]
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["duplicate", "garbage", "bad message", "bad field"]))
        at = draw(st.integers(0, len(entries)))
        if kind == "duplicate":
            twin = copy.deepcopy(draw(st.sampled_from(entries)))
            entries.insert(at, twin)
        elif kind == "garbage":
            entries.insert(at, draw(JSON))
        elif kind == "bad message":
            entries.insert(at, entry("message", f"b{at}", None, message={"role": "user", "content": 5}))
        else:
            entries.insert(at, entry("label", f"f{at}", None, targetId=7))
    return entries


def _run(entries: list[Any], decoded: list[int] | None) -> dict[str, Any]:
    reports: list[tuple[int, str]] = []
    checked = check_entries(
        copy.deepcopy(entries), lambda i, _e, p: reports.append((i, p)), None, None, decoded
    )
    late = [checked.late_check(e) if checked.late_check else None for e in checked.entries]
    return {
        "entries": json.dumps(checked.entries),
        "path": [e["id"] for e in checked.path],
        "projected": {k: [m.to_json() for m in v] for k, v in checked.projected.items()},
        "by_id": list(checked.by_id),
        "reports": reports,
        "late": [None if m is None else [x.to_json() for x in m] for m in late],
    }


@settings(FUZZ, max_examples=examples(300))
@given(entries=loaded())
def test_checking_in_bulk_gives_what_checking_entry_by_entry_gives(entries):
    slow = _run(entries, None)
    assert _run(entries, list(range(len(entries)))) == slow
    assert slow["by_id"] == [e["id"] for e in json.loads(slow["entries"])]


def test_a_chain_is_its_own_path_and_a_branch_is_walked():
    chain = [user("u1", None, "one"), assistant("a1", "u1", "two"), user("u2", "a1", "three")]
    checked = check_entries(chain, lambda *_: None, None, None, [0, 1, 2])
    assert checked.path == chain and checked.path is not checked.entries
    branched = [*chain, assistant("a2", "u1", "other")]
    checked = check_entries(branched, lambda *_: None, None, None, [0, 1, 2, 3])
    assert [e["id"] for e in checked.path] == ["u1", "a2"]
    looped = [user("u1", "u2", "one"), user("u2", "u1", "two")]  # the first one's parent is later
    checked = check_entries(looped, lambda *_: None, None, None, [0, 1])
    assert [e["id"] for e in checked.path] == ["u1", "u2"]


def test_late_check_knows_only_the_entries_it_loaded():
    records = [user("u1", None, "one"), assistant("a1", "u1", "two")]
    seen: list[tuple[int, str]] = []
    checked = check_entries(records, lambda i, _e, p: seen.append((i, p)), None, None, [0, 1])
    assert checked.late_check is not None
    assert checked.late_check(copy.deepcopy(records[0])) is None  # same id, not the one loaded
    assert checked.late_check(user("u9", "a1", "new")) is None
    assert [m.role for m in checked.late_check(checked.entries[0]) or []] == ["user"]
    checked.entries[1]["message"]["content"] = 5
    assert checked.late_check(checked.entries[1]) == [] and seen and seen[0][0] == 1


@settings(FUZZ, max_examples=examples(300))
@given(entries=valid_entries(10), labels=st.lists(st.integers(0, 9), max_size=3))
def test_a_tree_built_in_bulk_is_the_tree_built_entry_by_entry(entries, labels):
    for at in labels:
        if at < len(entries):
            entries[at] = entry(
                "label", entries[at]["id"], entries[at]["parentId"], targetId="v0000000", label="x"
            )
    expected: dict[str, str] = {}
    for item in entries:  # labels as the tree indexed them entry by entry
        if item["type"] == "label" and isinstance(item.get("targetId"), str):
            if item.get("label"):
                expected[item["targetId"]] = item["label"]
            else:
                expected.pop(item["targetId"], None)
    tree = SessionTree(entries)
    taken = SessionTree(entries, by_id={e["id"]: e for e in entries})
    for one in (tree, taken):
        assert one.leaf == entries[-1]["id"] and one.entries() == entries
        assert one.labels() == expected
        assert all(one.get(e["id"]) is e for e in entries)


def _context_entries_one_by_one(path: list[dict]) -> list[dict]:
    """``context_entries`` as it was written first: a forward walk to the first kept entry."""
    index = next((i for i in range(len(path) - 1, -1, -1) if path[i]["type"] == "compaction"), -1)
    if index < 0:
        return list(path)
    compaction = path[index]
    kept = [compaction]
    found = False
    for item in path[:index]:
        if not found and item["id"] == compaction.get("firstKeptEntryId"):
            found = True
        if found and not _is_system(item):
            kept.append(item)
    return kept + path[index + 1 :]


@settings(FUZZ, max_examples=examples(300))
@given(path=valid_entries(14), twins=st.lists(st.integers(0, 13), max_size=2))
def test_the_kept_range_starts_where_a_walk_finds_it(path, twins):
    for at in twins:  # ids used twice on a list (a hand-made one): the first one counts
        if at < len(path):
            path.insert(at, copy.deepcopy(path[-1 - at % len(path)]))
    assert context_entries(path) == _context_entries_one_by_one(path)
