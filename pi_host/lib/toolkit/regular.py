"""Opening only regular files.

Opening a FIFO blocks until the other end opens it, and reading a device or a socket may never
end; a tool stuck there holds a worker thread that no signal can interrupt. So the local file
system checks what a path is before it opens it (and again on the open descriptor, in case the
path was swapped in between) and refuses anything but a regular file with one clear line.
"""

from __future__ import annotations

import errno
import os
import stat as stat_module

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # POSIX; elsewhere there are no FIFOs to block on
_FLAGS = _NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


class NotRegularFileError(OSError):
    """A path that is a FIFO, a device or a socket. ``strerror`` reads ``it is a FIFO (named
    pipe), not a regular file``; ``errno`` is None (no errno says this)."""

    def __init__(self, path: str, kind: str | None) -> None:
        super().__init__(None, not_regular_text(kind), path)
        self.kind = kind


def special_kind(mode: int) -> str | None:
    """``a FIFO (named pipe)``, ``a character device``... for a special file; None for a regular
    file or a directory."""
    if stat_module.S_ISREG(mode) or stat_module.S_ISDIR(mode):
        return None
    if stat_module.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat_module.S_ISCHR(mode):
        return "a character device"
    if stat_module.S_ISBLK(mode):
        return "a block device"
    if stat_module.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def not_regular_text(kind: str | None) -> str:
    """The reason a tool gives: ``it is a FIFO (named pipe), not a regular file``."""
    return f"it is {kind or 'a device, FIFO or socket'}, not a regular file"


def _check(path: str, mode: int) -> None:
    if stat_module.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
    if not stat_module.S_ISREG(mode):
        raise NotRegularFileError(path, special_kind(mode))


def open_regular(path: str, flags: int, mode: int = 0o666) -> int:
    """``os.open`` that refuses anything but a regular file, without blocking on a FIFO.

    With ``O_CREAT`` a missing file is created. The descriptor comes back in blocking mode.
    """
    try:
        _check(path, os.stat(path).st_mode)
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            raise
    try:
        # O_NONBLOCK: if the path became a FIFO since the check, opening it still returns at once.
        fd = os.open(path, flags | _FLAGS, mode)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO opened for writing with no reader
            raise NotRegularFileError(path, special_kind(os.stat(path).st_mode)) from None
        raise
    try:
        _check(path, os.fstat(fd).st_mode)
        if _NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd
