"""The loader, fuzzed: whatever a session file holds, opening it raises nothing but the documented
``SessionOpenError``, keeps every valid entry, leaves the file as it was, and gives a session whose
every consumer (context, tree, listing, compaction's estimates, appends, copies) works.

Deterministic (``derandomize``); 2,450 examples in all (900 + 700 + 700 + 150).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pi_session_jsonl import jsonl
from pi_session_jsonl.listing import list_sessions, session_info
from pi_session_jsonl.store import JsonlStore

from pi_host.lib.compaction.estimate import branch_context_tokens, entry_tokens, estimate_context_tokens
from pi_host.lib.compaction.projection import project_entries
from pi_host.lib.sessions.store import SessionOpenError
from pi_host.lib.sessions.tree import editor_text
from pi_host.protocol import UserMessage
from tests.support.budget import examples
from tests.support.fuzz_sessions import FUZZ, JSON, garbage_line, mixed_files, valid_entries
from tests.support.session_files import header


@pytest.fixture
def session_path(tmp_path) -> Path:
    return tmp_path / "fuzz.jsonl"


def _write(path: Path, data: bytes) -> None:
    for extra in (path.with_name(path.name + ".v1.bak"), path.with_name(path.name + ".v2.bak")):
        extra.unlink(missing_ok=True)
    path.write_bytes(data)


def _use_every_consumer(store: JsonlStore) -> None:
    """What the host does with a loaded session; none of it may raise."""
    context = store.build_context()
    for message in context.messages:
        message.to_json()
    for node in store.get_tree():
        json.dumps(node.to_json())
    path = store.path()
    branch_context_tokens(path, context.messages)
    estimate_context_tokens(context.messages)
    project_entries(store.context_entries())
    store.tree.dangling_tool_calls()
    for entry in store.entries():
        entry_tokens(entry)
        editor_text(entry)
        jsonl.encode(entry)  # fork, clone and migration write entries back
    store.name  # noqa: B018


@settings(FUZZ, max_examples=examples(900))
@given(data=st.data())
def test_mixed_garbage_keeps_every_valid_entry_and_the_file(data, session_path, tmp_path):
    raw, valid = data.draw(mixed_files(str(tmp_path)))
    _write(session_path, raw)
    warnings: list[str] = []
    store = JsonlStore.open_file(str(session_path), warn=warnings.append)
    try:
        kept = {e["id"]: e for e in store.entries()}
        for entry in valid:
            assert kept.get(entry["id"]) == entry, (entry, warnings)
        order = [e["id"] for e in store.entries() if e["id"].startswith("v")]
        assert order == [e["id"] for e in valid]
        assert all("\n" not in line for line in warnings)
        _use_every_consumer(store)
        assert session_path.read_bytes() == raw  # loading rewrote nothing
        leaf = store.leaf_id()
        added = store.append({"type": "message", "message": UserMessage(content="more").to_json()})
        assert added["parentId"] == leaf
    finally:
        store.close()
    assert session_path.read_bytes().startswith(raw)
    again = JsonlStore.open_file(str(session_path), warn=lambda _line: None)
    try:
        assert again.leaf_id() == added["id"] and again.get(added["id"])["parentId"] == leaf
        ids = [e["id"] for e in again.entries()]
        assert [i for i in ids if i in kept or i == added["id"]] == [*kept, added["id"]]
        # Messages are checked when their branch is used: garbage the first open dropped from
        # its leaf's context may stay in the tree when the new leaf's branch does not hold it.
        assert all(i.startswith("m") for i in ids if i not in kept and i != added["id"])
    finally:
        again.close()
    assert session_info(str(session_path), warn=lambda _line: None) is not None


@settings(FUZZ, max_examples=examples(700))
@given(
    first=st.one_of(JSON.map(lambda v: json.dumps(v).encode()), st.binary(max_size=60)), rest=valid_entries(4)
)
def test_garbage_first_line_is_refused_cleanly_or_skipped(first, rest, session_path, tmp_path):
    raw = first + b"\n" + json.dumps(header(cwd=str(tmp_path))).encode() + b"\n"
    raw += b"".join(json.dumps(e).encode() + b"\n" for e in rest)
    _write(session_path, raw)
    try:
        store = JsonlStore.open_file(str(session_path), warn=lambda _line: None)
    except SessionOpenError as exc:
        assert str(session_path) in str(exc) and "\n" not in str(exc)
        assert session_path.read_bytes() == raw
        return
    try:
        _use_every_consumer(store)
    finally:
        store.close()
    if jsonl.is_header(jsonl.parse_line(first)):
        return  # the garbage was itself a header (maybe of an old version, then migrated)
    assert session_path.read_bytes() == raw


@settings(FUZZ, max_examples=examples(700))
@given(data=st.data())
def test_byte_damage_to_one_line_loses_at_most_that_line(data, session_path, tmp_path):
    valid = data.draw(valid_entries(8))
    lines = [json.dumps(e).encode() for e in valid]
    index = data.draw(st.integers(0, len(lines) - 1))
    line = bytearray(lines[index])
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, max(0, len(line) - 1)))
        action = data.draw(st.sampled_from(["flip", "delete", "insert", "cut"]))
        if action == "flip" and line:
            line[at] = data.draw(st.integers(0, 255))
        elif action == "delete" and line:
            del line[at]
        elif action == "insert":
            line[at:at] = data.draw(st.binary(min_size=1, max_size=4))
        else:
            del line[at:]
    lines[index] = bytes(line)
    head = json.dumps(header(cwd=str(tmp_path))).encode()
    raw = b"\n".join([head, *lines])  # and maybe no final newline
    if data.draw(st.booleans()):
        raw += b"\n"
    _write(session_path, raw)
    store = JsonlStore.open_file(str(session_path), warn=lambda _line: None)
    try:
        kept = {e["id"] for e in store.entries()}
        for number, entry in enumerate(valid):
            if number != index and entry["id"].encode() not in lines[index]:
                assert entry["id"] in kept
        _use_every_consumer(store)
    finally:
        store.close()
    after = session_path.read_bytes()
    assert after == raw or (after == raw + b"\n" and not raw.endswith(b"\n"))


@settings(FUZZ, max_examples=examples(150))
@given(data=st.data())
def test_listing_never_raises_on_any_folder(data, tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir(exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    for number in range(data.draw(st.integers(1, 2))):
        raw, valid = data.draw(mixed_files(str(tmp_path)))
        if data.draw(st.booleans()):
            raw = data.draw(garbage_line(valid, 99)) + b"\n" + raw
        (folder / f"{number}.jsonl").write_bytes(raw)
    infos = list_sessions(str(tmp_path), str(tmp_path / "agent"), str(folder), warn=lambda _line: None)
    for info in infos:
        json.dumps(info.to_json())
        info.modified.astimezone()
    assert os.listdir(folder)
