"""A user command's output in bounded memory (``pi_host.lib.toolkit.user_output``): the tail the
message keeps, the capped log, and the coalesced live updates; then ``run_user_bash`` on ``yes``."""

from __future__ import annotations

import asyncio
import os
import random
import time
import tracemalloc

import pytest

import pi_host
from pi_host.lib.toolkit import truncate_tail
from pi_host.lib.toolkit.user_output import OutputTail, UpdateCoalescer, log_cap
from pi_host.runtime.user_bash import run_user_bash


def feed(tail: OutputTail, data: bytes, size: int) -> None:
    for start in range(0, len(data), size):
        tail.add(data[start : start + size])


def outputs() -> list[bytes]:
    rng = random.Random(7)
    cases = [
        b"",
        b"one line\n",
        b"no newline at the end",
        b"".join(b"%05d\n" % i for i in range(1999)),
        b"".join(b"%05d\n" % i for i in range(2001)),
        b"x" * (50 * 1024),
        b"x" * (50 * 1024 + 1),
        b"y\n" * 200_000,
        b"\n".join(b"z" * rng.randrange(1, 400) for _ in range(3000)),
        b"short\n" + b"w" * 300_000,  # one last line over the byte limit: its tail is kept
        ("é" * 40_000 + "\n" + "ü" * 10).encode(),
    ]
    cases += [bytes(rng.choice(b"ab\n") for _ in range(rng.randrange(1, 120_000))) for _ in range(6)]
    return cases


@pytest.mark.parametrize("size", [1 << 16, 777])
def test_the_tail_is_what_truncating_the_whole_output_gives(tmp_path, size):
    for data in outputs():
        tail = OutputTail()
        feed(tail, data, size)
        tail.close()
        whole = truncate_tail(data.decode("utf-8", errors="replace"))
        cut = tail.truncation()
        assert (cut.content, cut.truncated) == (whole.content, whole.truncated)
        assert cut.total_lines == (whole.total_lines if data else 0)
        assert cut.last_line_partial == whole.last_line_partial
        if whole.truncated:  # the full output is kept in a private file
            assert tail.full_output_path and open(tail.full_output_path, "rb").read() == data
            assert os.stat(tail.full_output_path).st_mode & 0o077 == 0
            os.remove(tail.full_output_path)
        else:
            assert tail.full_output_path is None


def test_memory_stays_bounded_and_the_log_stops_at_its_cap():
    tail = OutputTail(max_log_bytes=1 << 20)
    chunk = b"y\n" * 32768
    tracemalloc.start()
    try:
        for _ in range(3000):  # 192 MiB
            tail.add(chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    tail.close()
    assert peak < 8 << 20, peak
    assert tail.total_bytes == 3000 * len(chunk) and tail.total_lines == 3000 * 32768
    assert os.path.getsize(tail.full_output_path) == 1 << 20 and tail.log_capped
    cut = tail.truncation()
    assert cut.truncated and cut.content == "\n".join(["y"] * 2000)
    os.remove(tail.full_output_path)


def test_without_a_temp_dir_the_tail_is_kept_and_the_log_not_tried_again(tmp_path, monkeypatch):
    import tempfile

    class Counting(OutputTail):
        opens = 0

        def _open_log(self) -> None:
            self.opens += 1
            super()._open_log()

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    tail = Counting()
    data = b"".join(b"%06d\n" % i for i in range(100_000))
    feed(tail, data, 4096)
    tail.close()
    assert tail.opens == 1 and tail.full_output_path is None and tail.log_capped
    cut = tail.truncation()
    assert (cut.content, cut.truncated) == (truncate_tail(data.decode()).content, True)


def test_the_log_cap_comes_from_the_settings():
    assert log_cap({}) == 100 * 1024 * 1024
    assert log_cap({"shellOutputLogMaxBytes": 4096}) == 4096
    assert log_cap({"shellOutputLogMaxBytes": 0}) == 0  # no cap
    assert log_cap({"shellOutputLogMaxBytes": "lots"}) == 100 * 1024 * 1024


async def test_updates_are_coalesced_and_lose_nothing_when_slow():
    got: list[bytes] = []
    updates = UpdateCoalescer(got.append, interval=0.05)
    for n in range(40):
        updates.add(b"%d\n" % n)
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.1)  # the timer sends what came after the last update
    assert b"".join(got) == b"".join(b"%d\n" % n for n in range(40))
    assert 2 <= len(got) <= 10
    updates.close()
    assert b"".join(got) == b"".join(b"%d\n" % n for n in range(40))


async def test_a_flood_is_cut_to_the_newest_bytes_with_a_notice():
    got: list[bytes] = []
    updates = UpdateCoalescer(got.append, interval=0.05, max_bytes=4096)
    started = time.monotonic()
    while time.monotonic() - started < 0.5:
        updates.add(b"y\n" * 8192)
        await asyncio.sleep(0)
    updates.close()
    assert len(got) <= 0.5 / 0.05 + 3
    assert all(len(delta) <= 4096 + 100 for delta in got)
    assert any(b"skipped ...]\n" in delta for delta in got)
    assert got[-1].endswith(b"y\n")


async def test_a_character_split_between_chunks_arrives_whole():
    got: list[bytes] = []
    updates = UpdateCoalescer(got.append, interval=0)
    data = "héllo wörld €\n".encode()
    for index in range(len(data)):
        updates.add(data[index : index + 1])
    updates.close()
    assert all(delta.decode("utf-8") for delta in got)  # each delta decodes on its own
    assert b"".join(got) == data


async def test_yes_through_run_user_bash_stays_small(isolated_environment, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    session = await pi_host.create_session(
        model="faux/faux-1", settings={"shellOutputLogMaxBytes": 2 << 20}, cwd=str(tmp_path)
    )
    deltas: list[bytes] = []
    tracemalloc.start()
    started = time.monotonic()
    try:
        result = await run_user_bash(session, "yes | head -c 200000000", on_data=deltas.append)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        await session.close()
    wall = time.monotonic() - started
    assert result.exit_code == 0 and result.truncated and result.output == "\n".join(["y"] * 2000)
    assert peak < 32 << 20, peak  # 200 MB went through
    assert result.full_output_path and os.path.getsize(result.full_output_path) == 2 << 20
    assert os.path.dirname(result.full_output_path) == str(tmp_path)
    assert len(deltas) <= wall / 0.1 + 3
    assert sum(map(len, deltas)) < 200_000_000
