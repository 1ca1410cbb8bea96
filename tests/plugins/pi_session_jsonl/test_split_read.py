"""A big file read by two processes (``pi_session_jsonl.split_read``) reads exactly as one process
reading it whole: same entries, line numbers, skipped and long lines, stubs and their fills. When
the helper fails or is too slow, this process reads its part and nothing is lost."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pi_session_jsonl import reading, split_read
from pi_session_jsonl.store import JsonlStore

from tests.plugins.pi_session_jsonl.test_read_blocks import SIZES, files, reader
from tests.plugins.pi_session_jsonl.test_read_limits import file_stubs_from, read
from tests.support.budget import examples
from tests.support.fuzz_sessions import FUZZ
from tests.support.session_files import assistant, entry, header, user

pytestmark = pytest.mark.skipif(not split_read.can_split(), reason="the split read is Linux-only")


@contextlib.contextmanager
def split_from(size: int) -> Iterator[list[int]]:
    """Split files from ``size`` bytes; yields the pids of the helpers started."""
    saved, real_start = reading.SPLIT_MIN_BYTES, split_read.SecondPart.start
    started: list[int] = []

    def start(*args, **kwargs):
        part = real_start(*args, **kwargs)
        if part is not None:
            started.append(part.pid)
        return part

    reading.SPLIT_MIN_BYTES = size
    split_read.SecondPart.start = start  # type: ignore[method-assign]
    try:
        yield started
    finally:
        reading.SPLIT_MIN_BYTES = saved
        split_read.SecondPart.start = real_start  # type: ignore[method-assign]


def _same(got: reading.SessionRead, want: reading.SessionRead) -> None:
    assert got.header == want.header and got.lines == want.lines and got.skipped == want.skipped
    assert got.long_lines == want.long_lines and got.bracketed == want.bracketed
    assert got.missing_final_newline == want.missing_final_newline and got.size == want.size
    assert got.decoded() == want.decoded()
    assert got.stubs is not None and want.stubs is not None and len(got.stubs) == len(want.stubs)
    for mine, theirs in zip(got.entries, want.entries, strict=True):
        assert got.stubs.fill(mine) == want.stubs.fill(theirs)  # (a torn stub stays one)
        assert mine == theirs


def _gone(pid: int) -> bool:
    """Whether the helper was reaped (not a zombie left behind)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@settings(FUZZ, max_examples=examples(60))
@given(data=st.data())
def test_a_split_read_is_the_whole_read(data, tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(data.draw(files(str(tmp_path))))
    chunk = data.draw(SIZES)
    with reader(chunk, 10**9, stub_min=data.draw(st.sampled_from([1, 60]))), file_stubs_from(0):
        with split_from(10**12):
            want = read(path, stubs=True)
        with split_from(0) as started:
            got = read(path, stubs=True)
    _same(got, want)
    assert all(_gone(pid) for pid in started)


def _long_file(path: Path, count: int = 3000) -> None:
    records = [header(cwd=str(path.parent)), user("u0", None, "first")]
    parent = "u0"
    for index in range(count):
        kind = assistant if index % 2 else user
        records.append(kind(f"m{index}", parent, f"message {index} " + "y" * 300))
        parent = f"m{index}"
    records.append(
        entry("compaction", "c1", parent, summary="so far", firstKeptEntryId="m2990", tokensBefore=9)
    )
    lines = [json.dumps(record, separators=(",", ":")).encode() for record in records]
    lines[len(lines) // 2 + 3] = b'{"type":"message","id":"torn'  # a torn line in the helper's part
    path.write_bytes(b"\n".join(lines) + b"\n")


def test_the_store_builds_the_same_context_from_a_split_read(tmp_path):
    path = tmp_path / "s.jsonl"
    _long_file(path)
    contexts = []
    for split in (10**12, 0):
        with file_stubs_from(0), split_from(split) as started:
            said: list[str] = []
            store = JsonlStore.open_file(str(path), warn=said.append)
            try:
                contexts.append(([m.model_dump() for m in store.build_context().messages], said))
            finally:
                store.close()
        assert len(started) == (1 if split == 0 else 0)
    assert contexts[0] == contexts[1]
    assert len(contexts[0][0]) > 10 and contexts[0][1]  # the torn line is named either way


@pytest.mark.parametrize("failure", ["raises", "too slow", "bad answer"])
def test_when_the_helper_fails_this_process_reads_its_part(tmp_path, monkeypatch, failure):
    path = tmp_path / "s.jsonl"
    _long_file(path, 400)
    with file_stubs_from(0), split_from(10**12):
        want = read(path, stubs=True)
    real = reading._packed_rest

    def broken(*args):
        if failure == "raises":
            raise RuntimeError("the helper broke")
        if failure == "too slow":
            time.sleep(30)
        return b"not marshal data" if failure == "bad answer" else real(*args)

    monkeypatch.setattr(reading, "_packed_rest", broken)
    monkeypatch.setattr(split_read, "HELPER_TIMEOUT", 0.5)
    began = time.monotonic()
    with file_stubs_from(0), split_from(0) as started:
        got = read(path, stubs=True)
    assert time.monotonic() - began < 10  # a slow helper is ended, not waited for
    assert len(started) == 1 and _gone(started[0])
    _same(got, want)
