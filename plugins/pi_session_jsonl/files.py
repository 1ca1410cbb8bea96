"""Opening session files without tripping over things that are not files.

A ``*.jsonl`` name in a sessions folder, or a path given to ``--session``, can be a FIFO (opening it
blocks until someone writes), a device (``/dev/null`` reads as empty and swallows every append) or
a directory. Only regular files (symbolic links to them included) are ever opened as sessions.
"""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Iterator

HEADER_SCAN_LIMIT = 1024 * 1024
"""A session header must be found in a file's first MiB (pi's own header scan limit): a file
without one there is no session, however big it is."""
MAX_LINE_BYTES = 512 * 1024 * 1024
"""The longest line held in memory. pi cannot have written a longer one (a JavaScript string
holds at most 2^29 - 24 characters); a longer line is skipped as it streams past."""

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class NotARegularFile(OSError):
    """The path exists but is no regular file; ``kind`` says what it is."""

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(f"{path} is {kind}, not a regular file")
        self.path = path
        self.kind = kind


def kind_of(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: str, flags: int) -> int:
    """``os.open`` for a regular file only; anything else raises :class:`NotARegularFile` before
    it is opened (a FIFO would block, a device may act on being opened)."""
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise NotARegularFile(path, kind_of(mode))
    # Non-blocking and no controlling tty in case the path was swapped since the stat.
    fd = os.open(path, flags | os.O_NONBLOCK | os.O_NOCTTY)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFile(path, kind_of(mode))
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


class HeaderScanLimit(Exception):
    """A line of the file crosses :data:`HEADER_SCAN_LIMIT` before a header was found."""


def head_lines(fd: int, first_read: int = 64 * 1024) -> Iterator[tuple[bytes, bool]]:
    """The lines at the start of a file, for finding its header: ``(line, had a newline)``,
    read from offset 0 as far as they are asked for and never past :data:`HEADER_SCAN_LIMIT`
    (:class:`HeaderScanLimit` then). A short first read serves the usual file."""
    wanted = min(first_read, HEADER_SCAN_LIMIT + 1)
    data = os.pread(fd, wanted, 0)
    pos = 0
    while True:
        end = data.find(b"\n", pos)
        if end < 0 and len(data) == wanted <= HEADER_SCAN_LIMIT:
            wanted = HEADER_SCAN_LIMIT + 1  # (a long line, or many: read up to the limit once)
            data = os.pread(fd, wanted, 0)
            continue
        if end < 0 or end >= HEADER_SCAN_LIMIT:
            if len(data) > HEADER_SCAN_LIMIT:
                raise HeaderScanLimit
            if pos < len(data):
                yield data[pos:], False
            return
        yield data[pos:end], True
        pos = end + 1


def iter_lines(
    fd: int, chunk: int = 1024 * 1024, max_line: int = MAX_LINE_BYTES, buffer: bytearray | None = None
) -> Iterator[tuple[bytearray | bytes, int, int]]:
    """``(data, start, end)`` for each line of a file read from its current offset,
    ``data[start:end]`` without its newline and valid until the next line is asked for.

    Chunks are read into one buffer; a line longer than the buffer is joined into a ``bytes`` of
    its own, and one longer than ``max_line`` comes out empty (as a blank line), never held.
    ``buffer``: a buffer of ``chunk`` bytes to reuse (a caller reading many files)."""
    buf = buffer if buffer is not None and len(buffer) == chunk else bytearray(chunk)
    view = memoryview(buf)
    find = buf.find
    filled = pos = 0
    parts: list[bytes] = []  # a line longer than the buffer, so far
    held = 0
    skipping = False
    while True:
        if pos:
            kept = filled - pos
            buf[:kept] = bytes(view[pos:filled])
            filled, pos = kept, 0
        got = os.readv(fd, [view[filled:]])
        if not got:
            break
        start, filled = filled, filled + got
        if parts or skipping:
            nl = find(b"\n", start, filled)
            if nl < 0:
                held += filled
                if held > max_line:
                    parts, skipping = [], True
                if not skipping:
                    parts.append(bytes(view[:filled]))
                filled = 0
                continue
            if skipping or held + nl > max_line:
                yield b"", 0, 0
            else:
                parts.append(bytes(view[:nl]))
                line = b"".join(parts)
                yield line, 0, len(line)
            parts, held, skipping = [], 0, False
            pos = nl + 1
        while (nl := find(b"\n", pos, filled)) >= 0:
            yield (buf, pos, nl) if nl - pos <= max_line else (b"", 0, 0)
            pos = nl + 1
        if pos == 0 and filled == chunk:  # no line ends in a full buffer
            parts.append(bytes(view[:filled]))
            held = filled
            filled = 0
    if skipping or held + filled - pos > max_line:
        yield b"", 0, 0
    elif parts or pos < filled:
        line = b"".join([*parts, bytes(view[pos:filled])])
        yield line, 0, len(line)
