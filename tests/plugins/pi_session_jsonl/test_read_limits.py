"""The store's reader with limits (``pi_session_jsonl.reading``, hardening item 5): the header is
looked for in the first MiB only, no line longer than ``MAX_LINE_BYTES`` is held, and a big file's
stubs read their lines back from the file instead of keeping its blocks. Everything else reads
exactly as ``jsonl.read_fd`` does, at any block size."""

from __future__ import annotations

import contextlib
import json
import os
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pi_session_jsonl import jsonl, reading
from pi_session_jsonl.store import JsonlStore

from pi_host.lib.sessions.store import SessionOpenError
from tests.plugins.pi_session_jsonl.test_read_blocks import SIZES, files, reader
from tests.support.budget import examples
from tests.support.fuzz_sessions import FUZZ
from tests.support.session_files import assistant, entry, header, user

MiB = 1024 * 1024


def read(path: Path, stubs: bool = False) -> reading.SessionRead:
    fd = os.open(path, os.O_RDONLY)
    try:
        return reading.read_session(fd, str(path), stubs=stubs)
    finally:
        os.close(fd)


def reference(path: Path, stubs: bool = False) -> jsonl.LoadedFile:
    fd = os.open(path, os.O_RDONLY)
    try:
        return jsonl.read_fd(fd, str(path), stubs=stubs)
    finally:
        os.close(fd)


@contextlib.contextmanager
def file_stubs_from(size: int) -> Iterator[None]:
    saved = reading.FILE_STUBS_MIN_BYTES
    reading.FILE_STUBS_MIN_BYTES = size
    try:
        yield
    finally:
        reading.FILE_STUBS_MIN_BYTES = saved


@contextlib.contextmanager
def peak_memory() -> Iterator[list[int]]:
    """The peak of Python allocations inside the block, in bytes (``[peak]`` once it ends)."""
    result: list[int] = []
    tracemalloc.start()
    try:
        yield result
    finally:
        result.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()


def _write(path: Path, records: list[dict], tail: bytes = b"") -> Path:
    path.write_bytes(b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in records) + tail)
    return path


# --- the header -------------------------------------------------------------------------------


def test_a_big_file_without_a_header_is_refused_after_its_first_mib(tmp_path):
    path = tmp_path / "zeros.jsonl"
    with open(path, "wb") as handle:
        handle.truncate(1024 * MiB)  # sparse: a GiB of NUL bytes without a newline
    with (
        peak_memory() as peak,
        pytest.raises(jsonl.BadSessionFile, match="no session header in its first 1 MiB"),
    ):
        read(path, stubs=True)
    assert peak[0] < 4 * MiB


def test_a_header_after_a_mib_of_blank_lines_is_not_looked_for(tmp_path):
    path = tmp_path / "late.jsonl"
    path.write_bytes((b" " * 1000 + b"\n") * 1050 + json.dumps(header()).encode() + b"\n")
    with pytest.raises(jsonl.BadSessionFile, match="first 1 MiB"):
        read(path)


def test_blank_and_torn_lines_before_the_header_are_skipped_as_pi_skips_them(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        b'\n{"type":"sess\n'
        + json.dumps(header()).encode()
        + b"\n"
        + json.dumps(user("u1", None, "hi")).encode()
        + b"\n"
    )
    loaded = read(path)
    assert loaded.header == header() and loaded.skipped == [2] and loaded.lines == [4]


def test_a_first_entry_that_is_no_header_is_refused_at_once(tmp_path):
    path = _write(tmp_path / "s.jsonl", [user("u1", None, "hi"), header()])
    with pytest.raises(jsonl.BadSessionFile, match="the first line is not a session header"):
        read(path)


def test_a_header_without_its_newline_is_the_whole_file(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(json.dumps(header()).encode())
    loaded = read(path, stubs=True)
    assert loaded.header == header() and loaded.entries == [] and loaded.missing_final_newline
    assert loaded.size == path.stat().st_size


def test_a_file_of_blank_lines_has_no_header(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n  \n{oops\n")
    loaded = read(path)
    assert loaded.header is None and loaded.skipped == [3]


# --- long lines --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("chunk", "limit", "size"), [(7, 4096, 20_000), (4096, MiB, 8 * MiB), (65536, MiB, 8 * MiB)]
)
def test_a_line_longer_than_the_limit_is_skipped_without_being_held(
    tmp_path, monkeypatch, chunk, limit, size
):
    monkeypatch.setattr(reading, "MAX_LINE_BYTES", limit)
    long_line = json.dumps(user("u2", "u1", "x" * size)).encode()
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        b"\n".join(
            [
                json.dumps(header()).encode(),
                json.dumps(user("u1", None, "one")).encode(),
                long_line,
                json.dumps(assistant("a1", "u1", "two")).encode(),
                long_line,  # the last line, without its newline
            ]
        )
    )
    with reader(chunk, 10**9), peak_memory() as peak:
        loaded = read(path, stubs=True)
    assert peak[0] < max(size / 2, 256 * 1024)  # neither long line was ever held
    assert [e["id"] for e in loaded.entries] == ["u1", "a1"] and loaded.lines == [2, 4]
    assert loaded.long_lines == [3, 5] and loaded.missing_final_newline
    said: list[str] = []
    reading.warn_long_lines(loaded, said.append)
    assert said == [f"{path}: skipped line 3, 5: longer than {limit // MiB} MiB"]


def test_the_store_names_a_skipped_long_line_and_opens_the_rest(tmp_path, monkeypatch):
    monkeypatch.setattr(reading, "MAX_LINE_BYTES", MiB)
    records = [header(cwd=str(tmp_path)), user("u1", None, "one"), user("u2", "u1", "y" * (2 * MiB))]
    path = _write(tmp_path / "s.jsonl", [*records, assistant("a1", "u1", "two")])
    said: list[str] = []
    with reader(64 * 1024, 10**9):  # (a line longer than the limit spans blocks: it always does)
        store = JsonlStore.open_file(str(path), warn=said.append)
    try:
        assert [m.role for m in store.build_context().messages] == ["user", "assistant"]
    finally:
        store.close()
    assert said == [f"{path}: skipped line 3: longer than 1 MiB"]


# --- the same reading as jsonl.read_fd ---------------------------------------------------------


@settings(FUZZ, max_examples=examples(100))
@given(data=st.data())
def test_reads_what_the_plain_reader_reads_with_memory_or_file_stubs(data, tmp_path):
    raw = data.draw(files(str(tmp_path)))
    path = tmp_path / "s.jsonl"
    path.write_bytes(raw)
    chunk = data.draw(SIZES)
    with reader(chunk, data.draw(st.sampled_from([1, 10**9])), stub_min=data.draw(st.sampled_from([1, 60]))):
        expected, expected_lazy = reference(path), reference(path, stubs=True)
        eager = read(path)
        with file_stubs_from(data.draw(st.sampled_from([0, 10**12]))):
            lazy = read(path, stubs=True)
    for got, want in ((eager, expected), (lazy, expected_lazy)):
        assert got.header == want.header and got.lines == want.lines
        assert got.skipped == want.skipped and got.long_lines == []
        assert got.missing_final_newline == want.missing_final_newline and got.size == want.size
        assert got.decoded() == want.decoded()
    assert eager.entries == expected.entries
    assert lazy.stubs is not None and expected_lazy.stubs is not None
    for mine, theirs in zip(lazy.entries, expected_lazy.entries, strict=True):
        assert lazy.stubs.fill(mine) == expected_lazy.stubs.fill(theirs)  # (a torn stub stays one)
        assert mine == theirs
    lazy.close()


# --- big files: stubs read back from the file --------------------------------------------------


def _compacted_session(tmp_path: Path, turns: int = 300) -> tuple[Path, list[dict]]:
    records = [header(cwd=str(tmp_path))]
    parent = None
    for turn in range(turns):
        records.append(user(f"u{turn}", parent, f"question {turn} " + "z" * 500))
        records.append(assistant(f"a{turn}", f"u{turn}", f"answer {turn} " + "z" * 500))
        parent = f"a{turn}"
    last = f"u{turns - 1}"
    records.append(entry("compaction", "c1", parent, summary="so far", firstKeptEntryId=last, tokensBefore=9))
    return _write(tmp_path / "s.jsonl", records), records


def test_big_files_keep_no_blocks_and_decode_the_same(tmp_path):
    path, records = _compacted_session(tmp_path)
    with file_stubs_from(0), reader(4096, 10**9):
        loaded = read(path, stubs=True)
    assert loaded.file is not None and loaded.stubs is not None
    kept = [block for block in loaded.stubs._blocks if not isinstance(block, reading.FileBlock)]
    assert kept == []  # nothing of the file's bytes is held
    stubbed = [e for e in loaded.entries if e.get("message", {}).keys() == {"role"}]
    assert len(stubbed) == 600 and len({id(e["message"]) for e in stubbed}) == 2  # one per role
    loaded.stubs.fill_all(loaded.entries)
    assert loaded.entries == records[1:]
    loaded.close()


def test_a_store_on_a_big_file_answers_the_same_and_closes_its_reader(tmp_path):
    path, _records = _compacted_session(tmp_path)
    plain = JsonlStore.open_file(str(path))
    expected = [m.to_json() for m in plain.build_context().messages], plain.entries()
    plain.close()
    with file_stubs_from(0):
        store = JsonlStore.open_file(str(path))
    try:
        assert [m.to_json() for m in store.build_context().messages] == expected[0]
        store.append({"type": "message", "message": user("x", None, "more")["message"]})
        assert store.entries()[:-1] == expected[1]  # every stub read back from the file
    finally:
        store.close()
    # no descriptor of this process is left on the file (counting all descriptors raced with
    # other tests' files being collected in the same worker)
    assert not _open_on(path)


def test_a_big_session_file_is_still_refused_when_it_is_no_session(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"x" * (2 * MiB) + b"\n")
    with pytest.raises(SessionOpenError, match="no session header in its first 1 MiB"):
        JsonlStore.open_file(str(path))
    assert path.read_bytes() == b"x" * (2 * MiB) + b"\n"


def _open_on(path) -> list[str]:
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == str(path):
                found.append(fd)
        except OSError:  # closed while listing
            continue
    return found
