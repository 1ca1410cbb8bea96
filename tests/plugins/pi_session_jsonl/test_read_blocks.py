"""The JSONL reader works on blocks (``pi_session_jsonl.jsonl``): whatever the block size, and
whether a block is ``bytes`` or populated anonymous memory, a file reads exactly as it does line
by line; stubs keep their blocks and let go of each one once all its stubs are filled.

Small blocks (down to one byte) put line ends, stub prefixes and multi-byte characters across
block boundaries; ``STUB_MIN_BYTES`` is lowered so that short test lines become stubs too.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pi_session_jsonl import jsonl
from pi_session_jsonl.store import JsonlStore

from pi_host.lib.sessions.stubs import Stubs
from tests.support.budget import examples
from tests.support.fuzz_sessions import FUZZ, garbage_line, valid_entries
from tests.support.session_files import assistant, header, tool_result, user


@contextlib.contextmanager
def reader(chunk: int, populate_min: int, stub_min: int = jsonl.STUB_MIN_BYTES) -> Iterator[None]:
    """The reader with other block sizes (module settings, restored after)."""
    saved = jsonl.CHUNK_SIZE, jsonl.POPULATE_MIN_BYTES, jsonl.STUB_MIN_BYTES
    jsonl.CHUNK_SIZE, jsonl.POPULATE_MIN_BYTES, jsonl.STUB_MIN_BYTES = chunk, populate_min, stub_min
    try:
        yield
    finally:
        jsonl.CHUNK_SIZE, jsonl.POPULATE_MIN_BYTES, jsonl.STUB_MIN_BYTES = saved


def read(path: Path, stubs: bool) -> jsonl.LoadedFile:
    fd = os.open(path, os.O_RDONLY)
    try:
        return jsonl.read_fd(fd, str(path), stubs=stubs)
    finally:
        os.close(fd)


def line_by_line(raw: bytes) -> dict[str, Any]:
    """What reading gives, worked out the simple way: split on newlines, decode every line."""
    lines = raw.split(b"\n")
    missing = bool(lines[-1])
    if not missing:
        lines.pop()
    out: dict[str, Any] = {"header": None, "entries": [], "lines": [], "skipped": [], "missing": missing}
    for number, line in enumerate(lines, 1):
        if not line or line.isspace():
            continue
        value = jsonl.parse_line(line)
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            out["skipped"].append(number)
        elif out["header"] is None:
            out["header"] = value
        else:
            out["entries"].append(value)
            out["lines"].append(number)
    return out


def _line(record: dict[str, Any], draw) -> bytes:
    ending = draw(st.sampled_from([b"", b"", b" ", b"\r", b"\t "]))
    ascii_only = draw(st.booleans())
    return json.dumps(record, ensure_ascii=ascii_only, separators=(",", ":")).encode() + ending


@st.composite
def files(draw, cwd: str) -> bytes:
    """A v3 file as pi writes it (compact JSON), with garbage, blank lines, trailing blanks, CRLF,
    non-ASCII text and maybe no final newline."""
    valid = draw(valid_entries(12))
    for entry in valid:
        message = entry.get("message")
        if isinstance(message, dict) and draw(st.booleans()):
            message["extra"] = draw(st.text(max_size=30))  # longer lines, some non-ASCII
    valid += [user(f"w{n}", None, draw(st.text(max_size=40))) for n in range(draw(st.integers(0, 4)))]
    lines = [_line(e, draw) for e in valid]
    for number in range(draw(st.integers(0, 4))):
        lines.insert(draw(st.integers(0, len(lines))), draw(garbage_line(valid, number)))
    for number in range(draw(st.integers(0, 3))):  # torn writes of lines that look like stubs
        whole = _line(user(f"t{number}", "v0000000", "y" * draw(st.integers(0, 80))), draw)
        cut = draw(st.integers(whole.index(b'"content"'), len(whole)))
        torn = whole[:cut] + draw(st.sampled_from([b"", b"}", b"}}", b"} "]))
        lines.insert(draw(st.integers(0, len(lines))), torn)
    for _ in range(draw(st.integers(0, 2))):
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from([b"", b"  ", b"\r"])))
    raw = b"\n".join([json.dumps(header(cwd=cwd)).encode(), *lines])
    return raw if draw(st.booleans()) else raw + b"\n"


SIZES = st.sampled_from([1, 2, 3, 7, 64, 333, 4096])


@settings(FUZZ, max_examples=examples(250))
@given(data=st.data())
def test_any_block_size_reads_what_a_line_by_line_read_gives(data, tmp_path):
    raw = data.draw(files(str(tmp_path)))
    path = tmp_path / "s.jsonl"
    path.write_bytes(raw)
    expected = line_by_line(raw)
    chunk, populate_min = data.draw(SIZES), data.draw(st.sampled_from([1, 10**9]))
    with reader(chunk, populate_min, stub_min=data.draw(st.sampled_from([1, 60, 256]))):
        eager = read(path, stubs=False)
        lazy = read(path, stubs=True)
    assert eager.header == expected["header"]
    assert eager.entries == expected["entries"] and eager.lines == expected["lines"]
    assert eager.skipped == expected["skipped"]
    assert eager.missing_final_newline == expected["missing"] and eager.size == len(raw)
    assert eager.stubs is None and eager.decoded() is None

    # Stubs: the same entries once filled. A stub whose line is no JSON (its prefix was intact)
    # is a line the eager read skipped; it stays a stub, and is reported when its branch is used.
    assert lazy.stubs is not None and lazy.missing_final_newline == eager.missing_final_newline
    decoded = set(lazy.decoded() or ())
    by_line = dict(zip(eager.lines, eager.entries, strict=True))
    for index, (entry, number) in enumerate(zip(lazy.entries, lazy.lines, strict=True)):
        if index in decoded:
            assert entry == by_line[number]
        elif lazy.stubs.fill(entry):
            assert entry == by_line[number]
        else:
            assert number in eager.skipped and entry["message"].keys() == {"role"}
    assert len(lazy.stubs) == 0 and lazy.stubs._blocks == []
    assert sorted(set(lazy.lines) | set(eager.skipped)) == sorted(set(eager.lines) | set(eager.skipped))


def _long_session(tmp_path: Path, turns: int = 40) -> tuple[Path, list[dict]]:
    records: list[dict] = []
    parent = None
    for turn in range(turns):
        u, a, r = f"u{turn}", f"a{turn}", f"r{turn}"
        records.append(user(u, parent, f"question {turn} " + "ü" * 50))
        records.append(assistant(a, u, f"calling {turn}", calls=[{"id": f"t{turn}", "name": "bash"}]))
        records.append(tool_result(r, a, f"t{turn}", f"output {turn} " + "x" * (300 + 37 * turn)))
        parent = r
    path = tmp_path / "long.jsonl"
    lines = [json.dumps(header(cwd=str(tmp_path)), separators=(",", ":"))]
    lines += [json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records]
    path.write_bytes("\n".join(lines).encode() + b"\n")
    return path, records


def test_populated_blocks_read_the_same_and_a_store_on_them_answers_the_same(tmp_path):
    path, records = _long_session(tmp_path)
    with reader(chunk=1000, populate_min=1):  # every block is anonymous memory
        loaded = read(path, stubs=True)
        assert loaded.stubs is not None and len(loaded.stubs) > 60
        assert any(not isinstance(block, bytes) for block in loaded.stubs._blocks)
        store = JsonlStore.open_file(str(path))
    try:
        lazy = [m.to_json() for m in store.build_context().messages]
        assert store.entries() == records
    finally:
        store.close()
    eager = JsonlStore(str(tmp_path), str(tmp_path), header=header(cwd=str(tmp_path)), entries=records)
    assert lazy == [m.to_json() for m in eager.build_context().messages]


def test_a_block_is_let_go_of_once_its_stubs_are_filled(tmp_path):
    path, records = _long_session(tmp_path)
    with reader(chunk=4096, populate_min=10**9):
        loaded = read(path, stubs=True)
    stubs = loaded.stubs
    assert stubs is not None
    held = len(stubs._blocks)
    assert held > 3 and all(stubs._blocks)
    first_block = [e for i, e in enumerate(stubs._entries) if i < stubs._firsts[1]]
    for entry in first_block:
        assert stubs.fill(entry)
    assert stubs._blocks[0] == b"" and all(stubs._blocks[1:])
    assert len(stubs) == len(loaded.entries) - len(loaded.decoded() or ()) - len(first_block)
    stubs.fill_all(loaded.entries)
    assert len(stubs) == 0 and stubs._blocks == [] and stubs._entries == []
    assert loaded.entries == records


def test_stubs_added_one_by_one_fill_the_same(tmp_path):
    stubs = Stubs(jsonl.parse_line)
    full = user("u1", None, "one")
    stub = {"type": "message", "id": "u1", "parentId": None, "timestamp": full["timestamp"], "message": {}}
    stubs.add(stub, json.dumps(full).encode())
    other = {"type": "message", "id": "u2", "parentId": "u1", "message": {"role": "user"}}
    stubs.add(other, b'{"type":"message","id":"u2","parentId":"u1","message":{"role":"us')
    assert len(stubs) == 2
    assert stubs.fill(stub) and stub == full and len(stubs) == 1
    assert not stubs.fill(other) and not stubs.fill(other)  # broken: stays a stub
    assert stubs.fill(full) and len(stubs) == 0  # no stub (any more): nothing to do


def test_a_file_that_shrinks_while_it_is_read_gives_what_was_there(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"x" * 5000)
    fd = os.open(path, os.O_RDONLY)
    try:
        with reader(chunk=4096, populate_min=1):
            block = jsonl._read_block(fd, 2000, 9000)  # fstat said 9000 bytes: now 3000 are left
    finally:
        os.close(fd)
    assert block == b"x" * 3000 and isinstance(block, bytes)


def test_the_header_line_may_cross_blocks_and_stubs_start_after_it(tmp_path):
    path, records = _long_session(tmp_path, turns=3)
    for chunk in (1, 5, 50, 200):
        with reader(chunk=chunk, populate_min=10**9, stub_min=1):
            loaded = read(path, stubs=True)
        assert loaded.header == header(cwd=str(tmp_path)) and loaded.decoded() == []
        assert loaded.stubs is not None and len(loaded.stubs) == len(records)
        loaded.stubs.fill_all(loaded.entries)
        assert loaded.entries == records and loaded.lines == list(range(2, len(records) + 2))
