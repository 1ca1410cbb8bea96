"""Opening session files without tripping over things that are not files.

A ``*.jsonl`` name in a sessions folder, or a path given to ``--session``, can be a FIFO (opening it
blocks until someone writes), a device (``/dev/null`` reads as empty and swallows every append) or
a directory. Only regular files (symbolic links to them included) are ever opened as sessions.
"""

from __future__ import annotations

import fcntl
import os
import stat

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


def read_all(fd: int) -> bytes:
    """The whole file from offset 0."""
    chunks = []
    offset = 0
    while True:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)
