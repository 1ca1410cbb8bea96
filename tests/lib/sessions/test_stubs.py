"""Long message lines load as stubs and are decoded when used (``pi_host.lib.sessions.stubs``):
what a store hands out, and what the context holds, must be exactly what decoding every line
gives; a stub whose line does not decode is reported when its branch is used."""

from __future__ import annotations

import json
import os

from pi_session_jsonl import jsonl
from pi_session_jsonl.store import JsonlStore

from tests.support.session_files import assistant, entry, header, tool_result, user

BIG = "x" * 5000


def _lines(records: list[dict]) -> bytes:
    return b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in records)


def _session(tmp_path, records: list[dict]):
    path = tmp_path / "s.jsonl"
    path.write_bytes(_lines([header(cwd=str(tmp_path)), *records]))
    return path


def _history() -> list[dict]:
    records = [user("u1", None, "one"), assistant("a1", "u1", "calling")]
    records.append(tool_result("r1", "a1", "t1", BIG))
    records.append(assistant("a2", "r1", "done " + BIG))
    records.append(user("u2", "a2", "again"))
    records.append(tool_result("r2", "u2", "t2", BIG + "2"))
    records.append(entry("compaction", "c1", "r2", summary="sum", firstKeptEntryId="u2", tokensBefore=9))
    records.append(user("u3", "c1", "three"))
    records.append(assistant("a3", "u3", "final"))
    return records


def test_long_lines_are_stubs_until_used_and_then_exactly_what_the_file_holds(tmp_path):
    records = _history()
    path = _session(tmp_path, records)
    fd = os.open(path, os.O_RDONLY)
    try:
        loaded = jsonl.read_fd(fd, str(path), stubs=True)
    finally:
        os.close(fd)
    long_lines = [
        r["id"]
        for r in records
        if r["type"] == "message" and len(json.dumps(r, separators=(",", ":"))) >= jsonl.STUB_MIN_BYTES
    ]
    assert {"r1", "a2", "r2"} <= set(long_lines)
    assert loaded.stubs is not None and len(loaded.stubs) == len(long_lines)
    assert loaded.entries[2]["message"] == {"role": "toolResult"}
    store = JsonlStore.open_file(str(path))
    try:
        texts = [getattr(m, "content", None) for m in store.build_context().messages]
        assert len(texts) == 5 and store.tree._stubs is not None  # r2 is kept: decoded; r1 is not
        assert store.entries() == records  # handing entries out decodes the rest
        assert store.tree._stubs is None
    finally:
        store.close()


def test_the_context_is_the_same_as_with_every_line_decoded(tmp_path):
    records = _history()
    path = _session(tmp_path, records)
    store = JsonlStore.open_file(str(path))
    try:
        lazy = [m.to_json() for m in store.build_context().messages]
        store.navigate("a2")  # a branch through stubs
        lazy_branch = [m.to_json() for m in store.build_context().messages]
    finally:
        store.close()
    eager = JsonlStore(
        str(tmp_path),
        str(tmp_path),
        header=header(cwd=str(tmp_path)),
        entries=json.loads("[" + ",".join(json.dumps(r) for r in records) + "]"),
    )
    assert lazy == [m.to_json() for m in eager.build_context().messages]
    eager.navigate("a2")
    assert lazy_branch == [m.to_json() for m in eager.build_context().messages]
    assert any(BIG in json.dumps(m) for m in lazy_branch)


def test_a_corrupt_long_line_off_the_branch_is_reported_when_its_branch_is_used(tmp_path):
    records = _history()
    lines = _lines([header(cwd=str(tmp_path)), *records]).split(b"\n")
    lines[3] = lines[3][:-40] + b"}"  # r1: the prefix is intact, the JSON is not
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines))
    warnings: list[str] = []
    store = JsonlStore.open_file(str(path), warn=warnings.append)
    try:
        assert [m.role for m in store.build_context().messages][-2:] == ["user", "assistant"]
        assert warnings == []  # not on the active context
        store.navigate("a2")
        roles = [m.role for m in store.build_context().messages]
        assert roles == ["user", "assistant", "assistant"]  # r1 contributes nothing
        assert len(warnings) == 1 and f"{path}:4" in warnings[0] and "not valid JSON" in warnings[0]
    finally:
        store.close()


def test_a_torn_last_line_is_left_out_on_load(tmp_path):
    records = _history()[:3]  # ... ending with the long tool result r1
    data = _lines([header(cwd=str(tmp_path)), *records])
    path = tmp_path / "s.jsonl"
    path.write_bytes(data[:-30] + b"}\n")
    warnings: list[str] = []
    store = JsonlStore.open_file(str(path), warn=warnings.append)
    try:
        assert store.leaf_id() == "a1"
        assert len(warnings) == 1 and "not valid JSON" in warnings[0]
    finally:
        store.close()
