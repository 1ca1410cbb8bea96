"""A session file deleted, truncated or replaced while its session runs, and writing it again.

A store appends through the descriptor it opened. Sync tools, ``git checkout`` and editors may
meanwhile delete the file, cut it short in place, or write another file over its name: appends
would then go to a file nobody will open again, or land in an empty file with no header (which
``--session`` refuses). pi appends by path, so what it says keeps reaching the path.

So before each append the store asks :func:`what_changed` (a ``stat`` of the path against the
``fstat`` of the descriptor, and the size against what was written); on a change
:func:`write_again` puts the whole session back at the path, then appends go on there:

* what is written is the old file's bytes when the old file still holds everything (deleted or
  replaced: the descriptor still reads it), else the session as it is in memory;
* whatever is at the path is kept beside it as ``<path>.replaced-<time>`` unless it is empty or
  a prefix of what is written (an older copy of this session, or the same bytes): nothing another
  program put there is lost either;
* the new file is written whole under a temporary name and renamed over the path, so the path
  always names a complete session.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pi_session_jsonl import jsonl
from pi_session_jsonl.files import open_regular
from pi_session_jsonl.paths import ensure_dir

DELETED, TRUNCATED, REPLACED = "deleted", "truncated", "replaced"
_PIECE = 1024 * 1024


def what_changed(path: str, fd: int, written: int) -> str | None:
    """:data:`DELETED` when nothing is at ``path``, :data:`REPLACED` when another file is,
    :data:`TRUNCATED` when the file holds fewer than the ``written`` bytes; else None."""
    held = os.fstat(fd)
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return DELETED
    except NotADirectoryError:  # a folder on the way became a file
        return DELETED
    if (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
        return REPLACED
    if held.st_size < written:
        return TRUNCATED
    return None


@dataclass
class Rewritten:
    fd: int
    """The new file, open for appending and locked."""
    size: int
    aside: str | None
    """Where what was at the path was kept, if it was."""
    lost: int
    """Entries that could not be written (undecoded ones of a file cut short in place)."""


def write_again(
    path: str,
    old_fd: int,
    written: int,
    problem: str,
    header: dict[str, Any],
    entries: Callable[[], list[dict[str, Any]]],
) -> Rewritten:
    """Put the whole session back at ``path`` (see the module's docstring); raises OSError."""
    held = os.fstat(old_fd)
    mode, size = held.st_mode & 0o777, held.st_size
    lost = 0
    if problem != TRUNCATED and size >= written and _readable(old_fd):

        def content() -> Iterator[bytes]:
            return _file_pieces(old_fd, size)

    else:
        kept, lost = _usable(entries())

        def content() -> Iterator[bytes]:
            return _encoded(header, kept)

    aside = None if _is_prefix(path, content()) else _set_aside(path)
    ensure_dir(os.path.dirname(path))
    fd, size = _write_new(path, content(), mode)
    return Rewritten(fd, size, aside, lost)


def message(path: str, problem: str, rewritten: Rewritten) -> str:
    """The one line that says what happened."""
    how = {
        DELETED: "was deleted while the session was running; wrote the whole session to it again",
        TRUNCATED: "was cut short by another program while the session was running; wrote the whole "
        "session back to it",
        REPLACED: "was replaced by another file while the session was running; wrote the whole session "
        "back to it",
    }[problem]
    line = f"session file {path} {how}"
    if rewritten.aside:
        line += f" (the other file is kept as {rewritten.aside})"
    if rewritten.lost:
        line += f"; {rewritten.lost} older entries could not be read back and are missing"
    return line


def _usable(entries: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The entries minus stubs that could not be decoded (their file was cut short): a stub's
    message holds only its role, and writing it would save a message without content."""
    kept = [e for e in entries if e.get("type") != "message" or len(e.get("message") or ()) > 1]
    return kept, len(entries) - len(kept)


def _readable(fd: int) -> bool:
    try:
        os.pread(fd, 1, 0)
    except OSError:
        return False  # (opened for writing only)
    return True


def _file_pieces(fd: int, size: int) -> Iterator[bytes]:
    offset = 0
    while offset < size:
        piece = os.pread(fd, min(_PIECE, size - offset), offset)
        if not piece:
            return
        offset += len(piece)
        yield piece


def _encoded(header: dict[str, Any], entries: list[dict[str, Any]]) -> Iterator[bytes]:
    yield jsonl.encode(header)
    for start in range(0, len(entries), 256):
        yield b"".join(jsonl.encode(entry) for entry in entries[start : start + 256])


def _is_prefix(path: str, content: Iterable[bytes]) -> bool:
    """Whether the file at ``path`` is missing, empty, or holds the first bytes of ``content``."""
    try:
        fd = open_regular(path, os.O_RDONLY)
    except FileNotFoundError:
        return True
    except OSError:
        return False  # a directory, a FIFO, unreadable: set it aside untouched
    try:
        size = os.fstat(fd).st_size
        offset = 0
        for piece in content:
            if offset >= size:
                break
            theirs = os.pread(fd, len(piece), offset)
            if theirs != piece[: len(theirs)]:
                return False
            offset += len(theirs)
            if len(theirs) < len(piece):
                break
        return offset >= size
    finally:
        os.close(fd)


def _set_aside(path: str) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    aside = f"{path}.replaced-{stamp}"
    number = 1
    while os.path.lexists(aside):
        number += 1
        aside = f"{path}.replaced-{stamp}-{number}"
    os.rename(path, aside)
    return aside


def _write_new(path: str, content: Iterable[bytes], mode: int) -> tuple[int, int]:
    """Write ``content`` to a temporary file beside ``path``, lock it and rename it over
    ``path``; returns the descriptor (open for appending) and the size."""
    directory = os.path.dirname(path) or "."
    temp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC, mode)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pass  # (a filesystem without flock: appends are whole lines all the same)
        size = 0
        for piece in content:
            jsonl.write_all(fd, piece)
            size += len(piece)
        os.fsync(fd)
        os.replace(temp, path)
    except BaseException:
        os.close(fd)
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    return fd, size
