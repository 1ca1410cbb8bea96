"""A big session file read by two processes at once: the second part in a forked helper.

Resuming a long session is mostly one pass of Python over every line (a ``bytes.find``, a prefix
match and a small dict each), ~100 ms for 50 MiB, on one core. On Linux, a file with at least
``reading.SPLIT_MIN_BYTES`` after its header is cut at a line start near its middle: a
forked helper reads the second part while this process reads the first, and sends what it read
(entries, stubs, line numbers, all marshalled) through a pipe. The result is what one process
reading the whole file gives (the tests compare them on generated files).

The helper is a copy of this process that only reads the file and writes the pipe: it resets the
signal handlers it inherited (a Ctrl-C ends it; the event loop's wake-up descriptor is the
parent's), never runs exit handlers or flushes inherited buffers (``os._exit``), and ends when
its part is sent. When anything goes wrong (no fork, the helper fails or is killed, its answer is
cut short or is not one, it takes longer than ``HELPER_TIMEOUT``), this process reads the second
part itself: nothing is lost, it only takes longer.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable

HELPER_TIMEOUT = 60.0
"""Seconds to wait for the helper's part beyond the time this process took for its own."""

PARENT_SHARE = 0.53
"""The part of the file this process reads: a little over half, as the helper also packs its
part and pays for more copied-on-write pages, and this one unpacks it after."""

BOUNDARY_SEARCH = 1024 * 1024
"""How far past the middle a line start is looked for (no split without one)."""


def can_split() -> bool:
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def line_start_after(fd: int, offset: int, size: int) -> int | None:
    """The first line start after ``offset`` (within :data:`BOUNDARY_SEARCH`), if before ``size``."""
    piece = os.pread(fd, min(BOUNDARY_SEARCH, size - offset), offset)
    found = piece.find(b"\n")
    if found < 0 or offset + found + 1 >= size:
        return None
    return offset + found + 1


class SecondPart:
    """The helper reading ``[boundary, end of file)``; :meth:`result` is what it sent."""

    def __init__(self, pid: int, pipe: int, boundary: int) -> None:
        self.pid, self.pipe, self.boundary = pid, pipe, boundary
        self.started = time.monotonic()

    @classmethod
    def start(cls, fd: int, offset: int, size: int, read_part: Callable[[int], bytes]) -> SecondPart | None:
        """Fork a helper that calls ``read_part(boundary)`` and sends its bytes; None when the
        file cannot be split here (then nothing was started)."""
        if not can_split():
            return None
        boundary = line_start_after(fd, offset + int((size - offset) * PARENT_SHARE), size)
        if boundary is None:
            return None
        read_end, write_end = os.pipe()
        try:
            with _no_fork_warning():
                pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            return None
        if pid == 0:  # the helper: never returns
            _helper(read_end, write_end, lambda: read_part(boundary))
        os.close(write_end)
        return cls(pid, read_end, boundary)

    def result(self) -> bytes | None:
        """The helper's bytes, once it has ended well; None otherwise (it is then ended)."""
        import select

        waited_for_own_part = time.monotonic() - self.started
        deadline = time.monotonic() + HELPER_TIMEOUT + 4 * waited_for_own_part
        chunks: list[bytes] = []
        ok = False
        try:
            poller = select.poll()
            poller.register(self.pipe, select.POLLIN | select.POLLHUP)
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not poller.poll(int(left * 1000) + 1):
                    break
                chunk = os.read(self.pipe, 1 << 20)
                if not chunk:
                    ok = True
                    break
                chunks.append(chunk)
        finally:
            os.close(self.pipe)
            if not ok:
                with contextlib.suppress(OSError):
                    os.kill(self.pid, signal.SIGKILL)
            status = _reap(self.pid)
        return b"".join(chunks) if ok and status == 0 else None


def _reap(pid: int) -> int:
    while True:
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:  # reaped by someone else: its exit status is unknown
            return -1
        except InterruptedError:
            continue
        return os.waitstatus_to_exitcode(status)


def _helper(read_end: int, write_end: int, read_part: Callable[[], bytes]) -> None:
    status = 1
    try:
        os.close(read_end)
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(number, signal.SIG_DFL)
        with contextlib.suppress(ValueError, OSError):
            signal.set_wakeup_fd(-1)
        view = memoryview(read_part())
        while view:
            view = view[os.write(write_end, view) :]
        status = 0
    finally:
        os._exit(status)


@contextlib.contextmanager
def _no_fork_warning():
    """Python 3.12+ warns about forking with threads running (a lock another thread holds stays
    held in the child). The helper takes no lock another thread could hold: it reads a file,
    parses JSON and writes a pipe, with every module it uses already imported."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield
