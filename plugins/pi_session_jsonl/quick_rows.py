"""The session picker's quick rows: a :class:`~pi_session_jsonl.listing.SessionInfo` per file,
read once without parsing every line, newest file first and in batches; the preview's last
messages and the message-text search read files lazily (reference §6.8)."""

from __future__ import annotations

import os
import stat
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pi_host.lib.sessions.store import stderr_warn
from pi_session_jsonl import jsonl
from pi_session_jsonl.files import HEADER_SCAN_LIMIT, kind_of
from pi_session_jsonl.jsonl import parse_line
from pi_session_jsonl.listing import (
    SessionInfo,
    Warn,
    _listing_scope,
    _make_info,
    _open_for_reading,
    _Summary,
    session_info,
)
from pi_session_jsonl.row_text import (  # noqa: F401  (tests and callers read them here too)
    _ASSISTANT,
    _LINE,
    _MESSAGE,
    _USER,
    QUICK_CHUNK,
    ROLE_WINDOW,
    TAIL_READ_LIMIT,
    _FullParse,
    _lines,
    _role,
    tail_messages,
    text_matches,
)

TAIL_LINES = 8
"""How many of the last message lines are looked at for the newest activity."""
FIRST_BATCH = 40
"""Files summarised before ``quick_list`` first reports progress (the picker's first screen)."""
REPORT_EVERY_S = 0.05

_SESSION_INFO = b'{"type":"session_info",'
_CLOSE = 0x7D  # }
_NL = 0x0A


class QuickScanner:
    """:class:`SessionInfo` rows for the session picker without parsing every line of every file.

    Lines are only located (``memchr``) and their first bytes compared: ``{"type":"message",``
    lines are counted and the last ``{"type":"session_info",`` line is remembered. JSON is parsed
    for the header, the user messages up to the first one with text, the last ``session_info``
    entry and the last user/assistant messages (the newest activity), and each parsed entry goes
    through the same checks as in :func:`session_info`. On files written by pi or pi-host whose
    entries are valid the rows are :func:`session_info`'s, except ``all_messages_text``, which
    stays empty (see :func:`text_matches`). A line the scan cannot vouch for (one not starting
    with ``{"type":"`` or not ending with ``}``, an unterminated last line that does not parse, a
    header older than v3, a parsed entry the loader would refuse) hands the whole file to
    :func:`session_info` instead (counted in :attr:`full_parses`). Nothing in a file makes this
    raise, and a FIFO or device is never opened.
    """

    def __init__(self, warn: Warn | None = None, chunk: int = QUICK_CHUNK) -> None:
        said = warn or stderr_warn
        self.warnings = 0

        def counted(line: str) -> None:
            self.warnings += 1
            said(line)

        self.warn = counted
        self.buf = bytearray(max(chunk, 4 * ROLE_WINDOW))
        self.view = memoryview(self.buf)
        self.full_parses = 0

    def scan(self, path: str, mode: int | None = None) -> SessionInfo | None:
        """The row of one file, or None when it is no session (named on ``warn``, unless it
        vanished or has no header). ``mode``: the file's ``st_mode`` when the caller has it."""
        fd = _open_for_reading(path, self.warn) if mode is None else self._open(path, mode)
        if fd is None:
            return None
        try:
            return self._scan(fd, path)
        except _FullParse:
            pass
        except OSError as exc:
            self.warn(f"skipped {path}: cannot read it ({exc.strerror})")
            return None
        finally:
            os.close(fd)
        self.full_parses += 1
        return session_info(path, self.warn)

    def _open(self, path: str, mode: int) -> int | None:
        """:func:`_open_for_reading` for a path already stat'ed (one system call fewer or three:
        a non-blocking read needs no flags cleared on a regular file)."""
        if not stat.S_ISREG(mode):
            self.warn(f"skipped {path}: it is {kind_of(mode)}, not a regular file")
            return None
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        except OSError as exc:
            self.warn(f"skipped {path}: cannot read it ({exc.strerror})")
            return None
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # swapped since the stat
            os.close(fd)
            self.warn(f"skipped {path}: it is {kind_of(mode)}, not a regular file")
            return None
        return fd

    def _scan(self, fd: int, path: str) -> SessionInfo | None:
        buf, view = self.buf, self.view
        find, starts = buf.find, buf.startswith
        readv = os.readv
        capacity = len(buf)
        mtime = os.fstat(fd).st_mtime
        summary = _Summary()
        header: dict[str, Any] | None = None
        count = 0
        want_first = True
        last_info: tuple[int, int] | None = None
        tail: deque[tuple[int, int]] = deque(maxlen=TAIL_LINES)
        base = filled = pos = 0  # file offset of buf[0]; bytes held; start of the next line
        eof = False
        while True:
            nl = find(_NL, pos, filled)
            if nl < 0:
                if eof:
                    if pos >= filled:
                        break
                    nl = filled  # a last line without its newline
                elif pos == 0 and filled == capacity:  # a line longer than the buffer
                    if header is None and base + filled >= HEADER_SCAN_LIMIT:
                        return None  # no header in the first MiB: no session (the loader agrees)
                    start, head = base, bytes(view[:ROLE_WINDOW])
                    last = buf[filled - 1]
                    while True:
                        base += filled
                        filled = readv(fd, [view])
                        if not filled:
                            raise _FullParse  # unterminated: let the parser judge it
                        nl = find(_NL, 0, filled)
                        if nl >= 0:
                            last = buf[nl - 1] if nl else last
                            pos = nl + 1
                            break
                        last = buf[filled - 1]
                    if last != _CLOSE or not head.startswith(_LINE) or header is None:
                        raise _FullParse
                    if head.startswith(_MESSAGE):
                        count += 1
                        tail.append((start, base + nl))
                        if want_first and _role(head, 0, len(head)) == _USER:
                            want_first = _take_first(_read_entry(fd, start, base + nl), summary)
                    elif head.startswith(_SESSION_INFO):
                        last_info = (start, base + nl)
                    continue
                else:
                    if pos:
                        kept = filled - pos
                        buf[:kept] = bytes(view[pos:filled])
                        base, filled, pos = base + pos, kept, 0
                    got = readv(fd, [view[filled:]])
                    if got:
                        filled += got
                    else:
                        eof = True
                    continue
            if nl == pos:  # an empty line
                pos = nl + 1
                continue
            if starts(_MESSAGE, pos):
                if buf[nl - 1] != _CLOSE or header is None:
                    raise _FullParse
                count += 1
                tail.append((base + pos, base + nl))
                if want_first and _role(buf, pos, nl) == _USER:
                    want_first = _take_first(_parse(bytes(view[pos:nl])), summary)
            elif buf[nl - 1] != _CLOSE or not starts(_LINE, pos):
                raise _FullParse
            elif header is None:
                header = _parse(bytes(view[pos:nl]))
                if not jsonl.is_header(header):
                    return None
                if header.get("version") != 3:
                    raise _FullParse
            elif starts(_SESSION_INFO, pos):
                last_info = (base + pos, base + nl)
            if nl == filled and parse_line(bytes(view[pos:nl])) is None:
                raise _FullParse
            pos = nl + 1
        if header is None:
            return None
        if last_info is not None and summary.add(_read_entry(fd, *last_info)) is not None:
            raise _FullParse
        # The newest activity: the last user/assistant message written (messages are written in
        # the order of their times; the first one wins even when the last line is a tool result).
        for start, end in reversed(tail):
            head = os.pread(fd, min(end - start, ROLE_WINDOW), start)
            if _role(head, 0, len(head)) in (_USER, _ASSISTANT):
                if summary.add(_read_entry(fd, start, end)) is not None:
                    raise _FullParse
                break
        else:
            if count > len(tail):
                raise _FullParse
        summary.count, summary.texts = count, []
        return _make_info(path, header, summary, mtime)


def _parse(line: bytes) -> dict[str, Any]:
    entry = parse_line(line)
    if not isinstance(entry, dict):
        raise _FullParse
    return entry


def _read_entry(fd: int, start: int, end: int) -> dict[str, Any]:
    data = os.pread(fd, end - start, start)
    if len(data) != end - start:
        raise _FullParse  # the file changed under us
    return _parse(data)


def _take_first(entry: dict[str, Any], summary: _Summary) -> bool:
    """Add a user message; True while the first user text is still to be found."""
    if summary.add(entry) is not None:
        raise _FullParse
    return not summary.first


def session_files_newest_first(directories: list[str]) -> list[tuple[str, os.stat_result | None]]:
    """``(path, stat)`` of the ``*.jsonl`` files of ``directories``, the most recently modified
    first (stat None: it could not be stat'ed; the scan names why)."""
    found: list[tuple[float, str, os.stat_result | None]] = []
    for directory in directories:
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            if not entry.name.endswith(".jsonl"):
                continue
            try:
                info = entry.stat()
                found.append((info.st_mtime, entry.path, info))
            except OSError:
                found.append((0.0, entry.path, None))
    found.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return [(path, info) for _mtime, path, info in found]


ROW_CACHE_SIZE = 50_000
_rows: dict[str, tuple[tuple[int, int, int], SessionInfo]] = {}
"""Quick rows by path with the (mtime, size, inode) they were read at: a file that has not
changed is not read again by the next listing of the process (``/resume`` again, Tab)."""


Progress = Callable[[int, int, list[SessionInfo]], Any]
"""``progress(done, total, new_rows)``; returning False stops the listing."""


def quick_list(
    cwd: str,
    agent_dir: str,
    session_dir: str | None = None,
    all_dirs: bool = False,
    warn: Warn | None = None,
    progress: Progress | None = None,
) -> list[SessionInfo]:
    """:func:`list_sessions` with :class:`QuickScanner` rows (``all_messages_text`` empty).

    Files are read the most recently modified first; ``progress`` hears about the rows found so
    far after the first :data:`FIRST_BATCH` files, then every :data:`REPORT_EVERY_S` seconds and
    at the end (rows arrive in file order; the list returned is sorted newest first).
    """
    directories, filter_cwd = _listing_scope(cwd, agent_dir, session_dir, all_dirs)
    wanted = os.path.normpath(filter_cwd) if filter_cwd is not None else None
    files = session_files_newest_first(directories)
    scanner = QuickScanner(warn)
    infos: list[SessionInfo] = []
    batch: list[SessionInfo] = []
    total = len(files)
    report_at = time.monotonic() + REPORT_EVERY_S
    if len(_rows) > ROW_CACHE_SIZE:
        _rows.clear()
    for done, (path, stat_result) in enumerate(files, 1):
        key = (stat_result.st_mtime_ns, stat_result.st_size, stat_result.st_ino) if stat_result else None
        cached = _rows.get(path)
        if key is not None and cached is not None and cached[0] == key:
            info: SessionInfo | None = replace(cached[1])
        else:
            warned = scanner.warnings
            info = scanner.scan(path, stat_result.st_mode if stat_result else None)
            if info is None and scanner.warnings == warned and os.path.lexists(path):
                scanner.warn(f"skipped {path}: not a session file (no session header)")
            if info is not None and key is not None:
                _rows[path] = (key, replace(info))
        if info is not None and (wanted is None or os.path.normpath(info.cwd) == wanted):
            infos.append(info)
            batch.append(info)
        if progress is not None and (done == total or done == FIRST_BATCH or time.monotonic() >= report_at):
            if progress(done, total, batch) is False:
                break
            batch = []
            report_at = time.monotonic() + REPORT_EVERY_S
    if progress is not None and not total:
        progress(0, 0, [])
    infos.sort(key=lambda info: info.modified, reverse=True)
    return infos
