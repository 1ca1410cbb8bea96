"""Listing reads files as streams (hardening item 5): ``session_info`` holds one line at a time,
never the file; a file without a header in its first MiB is no session for the full summary,
the quick rows and the loader alike; ``files.iter_lines`` splits exactly as ``bytes.split``
does, and gives a line longer than its limit as an empty one without holding it."""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from pi_session_jsonl import files, listing, quick_rows, row_text

from tests.support.budget import examples
from tests.support.fuzz_sessions import FUZZ
from tests.support.session_files import assistant, header, tool_result, user

MiB = 1024 * 1024


def _peak(call):
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _big_session(path: Path, mib: int) -> Path:
    with open(path, "wb") as handle:
        handle.write(json.dumps(header(cwd="/w")).encode() + b"\n")
        handle.write(json.dumps(user("u1", None, "first question")).encode() + b"\n")
        line = json.dumps(tool_result("r1", "u1", "c1", "z" * 4000)).encode() + b"\n"
        handle.write(line * (mib * MiB // len(line)))
        handle.write(json.dumps(assistant("a1", "u1", "done")).encode() + b"\n")
    return path


def test_session_info_holds_a_line_at_a_time(tmp_path):
    path = _big_session(tmp_path / "s.jsonl", 32)
    info, peak = _peak(lambda: listing.session_info(str(path)))
    assert (
        info is not None
        and info.first_message == "first question"
        and info.all_messages_text.endswith("done")
    )
    assert info.message_count > 7000
    assert peak < 4 * MiB  # the file is 32 MiB


def test_no_header_in_the_first_mib_is_no_session_for_every_reader(tmp_path):
    zeros = tmp_path / "zeros.jsonl"
    with open(zeros, "wb") as handle:
        handle.truncate(512 * MiB)  # sparse, no newline
    late = tmp_path / "late.jsonl"
    late.write_bytes(b" " * (MiB + 5) + b"\n" + json.dumps(header()).encode() + b"\n")
    for path in (zeros, late):
        said: list[str] = []
        (info, peak) = _peak(lambda p=path, s=said: listing.session_info(str(p), s.append))
        assert info is None and said == [] and peak < 4 * MiB
        assert listing.read_header(str(path)) is None
        scanner = quick_rows.QuickScanner(said.append)
        assert scanner.scan(str(path)) is None


def test_a_long_line_is_left_out_of_the_summary(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "MAX_LINE_BYTES", 64 * 1024)
    monkeypatch.setattr(files.iter_lines, "__defaults__", (1024, 64 * 1024, None))
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        b"\n".join(
            json.dumps(record).encode()
            for record in (
                header(),
                user("u1", None, "one"),
                user("u2", "u1", "x" * 100_000),
                assistant("a1", "u2", "two"),
            )
        )
    )
    info = listing.session_info(str(path))
    assert info is not None and info.message_count == 2 and info.all_messages_text == "one two"


def _split(raw: bytes) -> list[bytes]:
    lines = raw.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    return lines


@settings(FUZZ, max_examples=examples(200))
@given(
    raw=st.lists(st.sampled_from([b"\n", b"a", b"bc", b"x" * 40, b"\n\n", b"y" * 9]), max_size=40).map(
        b"".join
    ),
    chunk=st.sampled_from([1, 2, 5, 16, 64]),
    limit=st.sampled_from([3, 10, 50, 10**9]),
)
def test_iter_lines_splits_as_split_does_and_empties_long_lines(raw, chunk, limit, tmp_path_factory):
    path = tmp_path_factory.mktemp("lines") / "f"
    path.write_bytes(raw)
    fd = os.open(path, os.O_RDONLY)
    try:
        got = [bytes(data[start:end]) for data, start, end in files.iter_lines(fd, chunk, limit)]
    finally:
        os.close(fd)
    assert got == [line if len(line) <= limit else b"" for line in _split(raw)]


def test_head_lines_reads_only_what_the_header_needs(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n" + b"a" * 100 + b"\n" + b"b" * 200_000 + b"\nend")
    fd = os.open(path, os.O_RDONLY)
    try:
        lines = files.head_lines(fd, first_read=64)
        assert next(lines) == (b"", True)
        assert next(lines) == (b"a" * 100, True)  # (the second read, up to the limit)
        assert next(lines) == (b"b" * 200_000, True)
        assert next(lines) == (b"end", False)
        assert list(lines) == []
    finally:
        os.close(fd)


def test_the_preview_looks_back_no_further_than_its_limit(tmp_path, monkeypatch):
    path = _big_session(tmp_path / "s.jsonl", 1)
    with open(path, "ab") as handle:
        handle.write(json.dumps(user("u2", "a1", "y" * 300_000)).encode())  # a long last line
    assert [text[:5] for _role, text in quick_rows.tail_messages(str(path), 2)] == ["done", "yyyyy"]
    monkeypatch.setattr(row_text, "TAIL_READ_LIMIT", 200_000)
    assert quick_rows.tail_messages(str(path), 2) == []  # neither is within the last 200,000 bytes
