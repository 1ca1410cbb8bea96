"""What the first prompt reads is capped (hardening item 5): piped stdin and each ``@file`` at
``MAX_INPUT_BYTES``; a regular file bigger than that is refused before it is read, an endless
one (``/dev/zero``) after the cap, each with one line naming it."""

from __future__ import annotations

import io
import os
import tracemalloc

import pytest

from pi_host.cli import input as cli_input
from pi_host.cli.input import InputFileError, compose_prompt, read_stdin

MiB = 1024 * 1024


@pytest.fixture
def small_cap(monkeypatch):
    monkeypatch.setattr(cli_input, "MAX_INPUT_BYTES", 1000)


def _stdin(data: bytes, errors: str = "surrogateescape") -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors=errors, newline="\n")


def test_stdin_up_to_the_cap_is_the_prompt_as_the_text_stream_reads_it(small_cap):
    assert read_stdin(_stdin(b"  why\r\nis it \xff red?\n" + b" " * 900)) == "why\r\nis it \udcff red?"
    assert read_stdin(_stdin(b"x" * 1000)) == "x" * 1000
    assert read_stdin(_stdin(b" \n ")) is None


def test_stdin_beyond_the_cap_is_one_line(small_cap):
    with pytest.raises(InputFileError) as caught:
        read_stdin(_stdin(b"x" * 1001))
    assert "stdin" in str(caught.value) and "\n" not in str(caught.value)


def test_stdin_from_dev_zero_stops_at_the_cap():
    with open("/dev/zero", "rb") as raw:
        stream = io.TextIOWrapper(raw, encoding="utf-8")
        tracemalloc.start()
        try:
            with pytest.raises(InputFileError, match="more than 64 MiB"):
                read_stdin(stream)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 200 * MiB


def test_a_text_stream_without_bytes_is_capped_too(small_cap):
    assert read_stdin(io.StringIO("hello ")) == "hello"
    with pytest.raises(InputFileError):
        read_stdin(io.StringIO("y" * 1001))


def test_at_dev_zero_is_refused_after_the_cap(small_cap, tmp_path):
    with pytest.raises(InputFileError, match="/dev/zero holds more than"):
        compose_prompt(["@/dev/zero", "what?"], None, str(tmp_path))


def test_a_big_regular_file_is_refused_before_it_is_read(tmp_path):
    big = tmp_path / "big.log"
    with open(big, "wb") as handle:
        handle.truncate(10 * 1024 * MiB)  # sparse: reading it would take minutes
    tracemalloc.start()
    try:
        with pytest.raises(InputFileError, match=f"{big} holds more than 64 MiB"):
            compose_prompt([f"@{big}"], None, str(tmp_path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MiB


def test_files_up_to_the_cap_are_read_and_a_pipe_is_read_to_its_end(small_cap, tmp_path):
    (tmp_path / "ok.txt").write_bytes(b"a" * 1000)
    text, _images, _rest = compose_prompt(["@ok.txt"], None, str(tmp_path))
    assert text == f'<file name="{tmp_path / "ok.txt"}">\n{"a" * 1000}\n</file>\n'
    read_end, write_end = os.pipe()
    os.write(write_end, b"from a pipe")
    os.close(write_end)
    try:
        text, _images, _rest = compose_prompt([f"@/dev/fd/{read_end}"], None, str(tmp_path))
    finally:
        os.close(read_end)
    assert "from a pipe" in text
