"""Truncation helpers: line/byte boundaries, UTF-8 boundaries, notices, sizes."""

from __future__ import annotations

from pi_host.lib.toolkit import (
    format_size,
    split_lines,
    tail_of,
    truncate_head,
    truncate_line,
    truncate_tail,
    with_notices,
)


def lines(n: int, width: int = 3) -> str:
    return "".join(f"{i:0{width}d}\n" for i in range(1, n + 1))


def test_line_counting_ignores_one_trailing_newline():
    assert split_lines("a\nb\n") == ["a", "b"]
    assert split_lines("a\nb") == ["a", "b"]
    assert split_lines("") == [""]
    assert split_lines("\n") == [""]


def test_head_exactly_at_line_limit_is_not_truncated():
    result = truncate_head(lines(2000))
    assert not result.truncated
    assert result.total_lines == 2000


def test_head_one_line_over_limit_keeps_2000_lines():
    result = truncate_head(lines(2001, width=4))
    assert result.truncated and result.truncated_by == "lines"
    assert result.output_lines == 2000
    assert result.content.splitlines()[-1] == "2000"
    assert result.total_lines == 2001


def test_head_byte_boundary_is_exact():
    # 10 lines of 1023 chars + newline = 10240 bytes; cap at 5120 keeps exactly 5 lines (5119 bytes).
    text = ("x" * 1023 + "\n") * 10
    result = truncate_head(text, max_bytes=5119)
    assert result.truncated_by == "bytes"
    assert result.output_lines == 5
    assert result.output_bytes == 5 * 1023 + 4
    result = truncate_head(text, max_bytes=5118)
    assert result.output_lines == 4


def test_head_first_line_over_cap_gives_empty_output():
    result = truncate_head("y" * 60_000 + "\nshort")
    assert result.content == ""
    assert result.first_line_exceeds_limit
    assert result.to_details()["firstLineExceedsLimit"] is True


def test_head_counts_utf8_bytes_not_characters():
    text = "é" * 30_000  # 60,000 bytes in one line
    result = truncate_head(text + "\nnext")
    assert result.first_line_exceeds_limit
    ok = truncate_head("é" * 25_000 + "\nnext")  # 50,000 bytes fits
    assert not ok.truncated


def test_tail_keeps_last_lines():
    result = truncate_tail(lines(2500, width=4))
    assert result.truncated_by == "lines"
    assert result.output_lines == 2000
    assert result.content.splitlines()[0] == "0501"
    assert result.content.splitlines()[-1] == "2500"


def test_tail_partial_last_line_starts_on_utf8_boundary():
    line = "ab" + "€" * 30_000  # € is 3 bytes: 90,002 bytes
    result = truncate_tail("first\n" + line)
    assert result.last_line_partial
    assert result.output_bytes <= 51200
    assert set(result.content) == {"€"}  # no replacement characters: cut on a character boundary
    assert result.content.encode() == line.encode()[-len(result.content.encode()) :]


def test_tail_window_with_partial_first_line_never_keeps_it():
    window = "tail-of-a-long-line\nkept1\nkept2\n"
    result = tail_of(window, total_lines=100_000, total_bytes=10_000_000, window_is_partial=True)
    assert result.content == "kept1\nkept2"
    assert result.total_lines == 100_000


def test_truncate_line_marks_cut_lines():
    assert truncate_line("a" * 500) == ("a" * 500, False)
    text, cut = truncate_line("a" * 501)
    assert cut and text.startswith("a" * 500) and "truncated" in text


def test_notices_are_bracketed_after_blank_line_and_joined():
    assert with_notices("body", []) == "body"
    assert with_notices("body", ["First.", "Second"]) == "body\n\n[First. Second.]"


def test_format_size():
    assert format_size(1023) == "1023B"
    assert format_size(1024) == "1.0KB"
    assert format_size(51200) == "50.0KB"
    assert format_size(3 * 1024 * 1024 + 1) == "3.0MB"
