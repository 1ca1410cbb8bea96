"""Finding sessions: listing, ``--continue``, ``--session <id prefix>`` and the ``--resume`` picker
(reference §6.8)."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TextIO

from pi_host.lib.sessions.store import SessionOpenError, iso_timestamp, stderr_warn
from pi_host.lib.sessions.tree import iso_to_ms, session_info_name
from pi_host.lib.sessions.validate import describe, field_problem
from pi_session_jsonl import jsonl
from pi_session_jsonl.files import (
    HEADER_SCAN_LIMIT,
    HeaderScanLimit,
    NotARegularFile,
    head_lines,
    iter_lines,
    open_regular,
)
from pi_session_jsonl.jsonl import parse_line
from pi_session_jsonl.paths import OnceWarn  # noqa: F401 (its old import path)
from pi_session_jsonl.row_text import _text, tail_messages, text_matches


@dataclass
class SessionInfo:
    path: str
    id: str
    cwd: str
    created: datetime
    modified: datetime
    message_count: int = 0
    first_message: str = "(no messages)"
    all_messages_text: str = ""
    name: str | None = None
    parent_session_path: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def last_messages(self, limit: int = 4) -> list[tuple[str, str]]:
        """The last ``limit`` user/assistant messages with text, as ``(role, text)``, oldest
        first (read from the end of the file now)."""
        return tail_messages(self.path, limit)

    def text_matches(self, needles: list[str]) -> bool:
        """Whether every one of ``needles`` (lowercase) is in the user/assistant text (read from
        the file now when this row came without ``all_messages_text``)."""
        if self.all_messages_text or not self.message_count:
            text = " ".join(self.all_messages_text.lower().split())
            return all(" ".join(needle.split()) in text for needle in needles)
        return text_matches(self.path, needles)

    def rename(self, name: str) -> str | None:
        """Name the session (a ``session_info`` entry appended to its file; an empty name clears
        it); the name as stored. Raises :class:`SessionOpenError` when the file is in use by
        another pi-host process or is no session."""
        from pi_session_jsonl.store import JsonlStore

        store = JsonlStore.open_file(self.path, warn=lambda line: None)
        try:
            entry = store.set_name(name)
        finally:
            store.close()
        self.name = session_info_name(entry)
        return self.name

    def to_json(self) -> dict[str, Any]:
        """pi's ``SessionInfo`` field names (dates as ISO strings)."""
        data: dict[str, Any] = {
            "path": self.path,
            "id": self.id,
            "cwd": self.cwd,
            "created": iso_timestamp(self.created),
            "modified": iso_timestamp(self.modified),
            "messageCount": self.message_count,
            "firstMessage": self.first_message,
            "allMessagesText": self.all_messages_text,
        }
        if self.name:
            data["name"] = self.name
        if self.parent_session_path:
            data["parentSessionPath"] = self.parent_session_path
        return data


Warn = Callable[[str], None]


def _dt(ms: Any) -> datetime | None:
    """A listing date from epoch ms, or None when out of range (a hand-edited ``1e20``): dates
    are also shown in local time, which fails near the ends of ``datetime``."""
    if not isinstance(ms, (int, float)) or isinstance(ms, bool) or not math.isfinite(ms):
        return None
    try:
        value = datetime.fromtimestamp(ms / 1000, UTC)
    except (OverflowError, ValueError, OSError):
        return None
    return value if 1 < value.year < 9999 else None


def _open_for_reading(path: str, warn: Warn) -> int | None:
    """A descriptor on a regular file, or None (named on ``warn``, unless the file vanished)."""
    try:
        return open_regular(path, os.O_RDONLY)
    except NotARegularFile as exc:
        warn(f"skipped {path}: it is {exc.kind}, not a regular file")
    except FileNotFoundError:
        pass
    except OSError as exc:
        warn(f"skipped {path}: cannot read it ({exc.strerror})")
    return None


def read_header(path: str, warn: Warn | None = None) -> dict[str, Any] | None:
    """The session header of a file, reading only up to its first parsed line; None if not a
    session (discovery must not fail, nor hang, on one bad file: a FIFO is never opened)."""
    fd = _open_for_reading(path, warn or stderr_warn)
    if fd is None:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            scanned = 0
            while scanned <= HEADER_SCAN_LIMIT:
                line = handle.readline(HEADER_SCAN_LIMIT + 1 - scanned)  # bounded: no newline needed
                if not line:
                    return None
                scanned += len(line)
                if not line.strip() or (scanned > HEADER_SCAN_LIMIT and not line.endswith(b"\n")):
                    continue
                value = parse_line(line)
                if value is None:
                    continue
                return value if jsonl.is_header(value) else None
    except OSError:
        return None
    return None


def _jsonl_files(directory: str) -> list[str]:
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return [os.path.join(directory, name) for name in names if name.endswith(".jsonl")]


def _cwd_matches(header: dict[str, Any], cwd: str) -> bool:
    value = header.get("cwd")
    return isinstance(value, str) and bool(value) and os.path.normpath(value) == os.path.normpath(cwd)


def find_most_recent(session_dir: str, cwd: str | None = None, warn: Warn | None = None) -> str | None:
    """Newest file by mtime whose header parses (and whose cwd matches, for shared dirs)."""
    files = []
    for path in _jsonl_files(session_dir):
        try:
            files.append((os.stat(path).st_mtime, path))
        except OSError:
            continue
    for _mtime, path in sorted(files, reverse=True):
        header = read_header(path, warn)
        if header is not None and (cwd is None or _cwd_matches(header, cwd)):
            return path
    return None


def find_by_id(
    session_dir: str, session_id: str, cwd: str | None = None, warn: Warn | None = None
) -> str | None:
    """The file in ``session_dir`` whose header id is exactly ``session_id``."""
    for path in _jsonl_files(session_dir):
        header = read_header(path, warn)
        if header is not None and header["id"] == session_id and (cwd is None or _cwd_matches(header, cwd)):
            return path
    return None


def find_by_prefix(
    directories: list[str], prefix: str, cwd: str | None = None, warn: Warn | None = None
) -> tuple[str, dict[str, Any]] | None:
    """Exact id first, then the most recently modified file whose id starts with ``prefix``."""
    candidates: list[tuple[float, str, dict[str, Any]]] = []
    for directory in directories:
        for path in _jsonl_files(directory):
            header = read_header(path, warn)
            if header is None or (cwd is not None and not _cwd_matches(header, cwd)):
                continue
            if header["id"] == prefix:
                return path, header
            if header["id"].startswith(prefix):
                try:
                    candidates.append((os.stat(path).st_mtime, path, header))
                except OSError:
                    continue
    if not candidates:
        return None
    _mtime, path, header = max(candidates, key=lambda item: item[0])
    return path, header


def all_session_dirs(agent_dir: str) -> list[str]:
    root = os.path.join(agent_dir, "sessions")
    try:
        return [
            os.path.join(root, name)
            for name in sorted(os.listdir(root))
            if os.path.isdir(os.path.join(root, name))
        ]
    except OSError:
        return []


def session_info(path: str, warn: Warn | None = None) -> SessionInfo | None:
    """Summarise one file (one pass over its lines, read as a stream: a huge file costs its
    longest line, not its size). Entries whose fields the loader would refuse are left out, the
    first one named on ``warn``; nothing in a file makes this raise."""
    warn = warn or stderr_warn
    fd = _open_for_reading(path, warn)
    if fd is None:
        return None
    try:
        mtime = os.fstat(fd).st_mtime
        found = _header(fd)
        if found is None:
            return None
        header, line_no = found
        summary = _Summary()
        for data, start, end in iter_lines(fd):
            line_no += 1
            if start == end:
                continue
            entry = parse_line(bytes(data[start:end]))
            if not isinstance(entry, dict):
                continue
            problem = summary.add(entry)
            if problem is not None:
                summary.problems += 1
                if summary.problems == 1:
                    summary.first_problem = f"{path}:{line_no}: {problem}"
    except OSError as exc:
        warn(f"skipped {path}: cannot read it ({exc.strerror})")
        return None
    finally:
        os.close(fd)
    if summary.first_problem:
        more = f" (and {summary.problems - 1} more)" if summary.problems > 1 else ""
        warn(f"{summary.first_problem}; entry left out of the session list{more}")
    return _make_info(path, header, summary, mtime)


def _header(fd: int) -> tuple[dict[str, Any], int] | None:
    """The header (the first JSON object, within the first MiB) and its line number, with the
    descriptor placed after it; None when the file is no session."""
    offset = line_no = 0
    try:
        for line, ended in head_lines(fd):
            line_no += 1
            offset += len(line) + ended
            if not line.strip():
                continue
            entry = parse_line(line)
            if isinstance(entry, dict):
                if not jsonl.is_header(entry):
                    return None
                os.lseek(fd, offset, os.SEEK_SET)
                return entry, line_no
    except HeaderScanLimit:
        pass
    return None


def _make_info(path: str, header: dict[str, Any], summary: _Summary, mtime: float) -> SessionInfo:
    created = _dt(iso_to_ms(header.get("timestamp")))
    activity = _dt(summary.last_activity) if summary.last_activity > 0 else None
    modified = activity or created or _dt(mtime * 1000) or datetime.now(UTC)
    parent = header.get("parentSession")
    cwd = header.get("cwd")
    return SessionInfo(
        path=path,
        id=header["id"],
        cwd=cwd if isinstance(cwd, str) else "",
        created=created or modified,
        modified=modified,
        message_count=summary.count,
        first_message=summary.first or "(no messages)",
        all_messages_text=" ".join(summary.texts),
        name=summary.name,
        parent_session_path=parent if isinstance(parent, str) else None,
    )


@dataclass
class _Summary:
    """What the list shows of a session, gathered entry by entry (§6.8 ``SessionInfo``)."""

    count: int = 0
    first: str = ""
    texts: list[str] = field(default_factory=list)
    name: str | None = None
    last_activity: float = 0
    problems: int = 0
    first_problem: str = ""

    def add(self, entry: dict[str, Any]) -> str | None:
        """Take one entry; returns why it was left out, if it was."""
        problem = field_problem(entry)
        if problem is not None:
            return problem
        kind = entry["type"]
        if kind == "session_info":
            self.name = session_info_name(entry)
        if kind != "message":
            return None
        message = entry["message"]
        role = message.get("role")
        if role not in ("user", "assistant"):
            self.count += 1
            return None
        text, problem = _text(message.get("content"))
        if problem is not None:
            return problem
        stamp = message.get("timestamp")
        if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
            if _dt(stamp) is None:
                return f"field message.timestamp: out of range, got {describe(stamp)}"
            activity = stamp
        else:
            activity = iso_to_ms(entry.get("timestamp"))
        self.count += 1
        if _dt(activity) is not None:
            self.last_activity = max(self.last_activity, activity)
        if text:
            self.texts.append(text)
            if not self.first and role == "user":
                self.first = text
        return None


def list_sessions(
    cwd: str,
    agent_dir: str,
    session_dir: str | None = None,
    all_dirs: bool = False,
    warn: Warn | None = None,
) -> list[SessionInfo]:
    """Sessions of ``cwd`` (or of every directory), newest activity first.

    With a custom session directory shared by several projects, only sessions whose header cwd is
    ``cwd`` are listed (unless ``all_dirs``).
    """
    directories, filter_cwd = _listing_scope(cwd, agent_dir, session_dir, all_dirs)
    infos = []
    for each in directories:
        for path in _jsonl_files(each):
            info = session_info(path, warn)
            if info is None:
                continue
            if filter_cwd is not None and os.path.normpath(info.cwd) != os.path.normpath(filter_cwd):
                continue
            infos.append(info)
    infos.sort(key=lambda info: info.modified, reverse=True)
    return infos


def _listing_scope(
    cwd: str, agent_dir: str, session_dir: str | None, all_dirs: bool
) -> tuple[list[str], str | None]:
    """The folders a listing reads and the cwd its sessions must have (None: any)."""
    from pi_session_jsonl.paths import resolve_session_dir

    directory, custom = resolve_session_dir(agent_dir, cwd, session_dir)
    if all_dirs:
        return ([directory] if custom else all_session_dirs(agent_dir)), None
    return [directory], (os.path.abspath(cwd) if custom else None)


def pick_session(
    sessions: list[SessionInfo],
    *,
    interactive: bool,
    stdin: TextIO | None = None,
    stderr: TextIO | None = None,
) -> SessionInfo:
    """A plain numbered picker: the list on stderr, a number read from stdin."""
    stdin = stdin or sys.stdin
    stderr = stderr or sys.stderr
    if not sessions:
        raise SessionOpenError("No sessions to resume in this directory")
    for index, info in enumerate(sessions, 1):
        title = info.name or info.first_message
        title = " ".join(title.split())
        if len(title) > 70:
            title = title[:67] + "..."
        when = info.modified.astimezone().strftime("%Y-%m-%d %H:%M")
        stderr.write(f"{index:3d}. {when}  {title}  ({info.message_count} messages, {info.id})\n")
    stderr.write(f"Session number [1-{len(sessions)}], empty to cancel: ")
    stderr.flush()
    try:
        answer = stdin.readline()
    except (OSError, ValueError):
        answer = ""
    if not interactive:
        stderr.write("\n")
    answer = answer.strip()
    if not answer:
        if interactive:
            raise SessionOpenError("No session selected")
        raise SessionOpenError(
            "No session selected: --resume needs a session number on stdin when not interactive"
        )
    if not (answer.isascii() and answer.isdigit()) or not 1 <= int(answer) <= len(sessions):
        raise SessionOpenError(f"No session selected: {answer!r} is not a number from 1 to {len(sessions)}")
    return sessions[int(answer) - 1]
