"""Finding sessions: listing, ``--continue``, ``--session <id prefix>`` and the ``--resume`` picker
(reference §6.8)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TextIO

import orjson

from pi_host.lib.sessions.store import SessionOpenError, iso_timestamp
from pi_host.lib.sessions.tree import iso_to_ms, session_info_name
from pi_session_jsonl import jsonl
from pi_session_jsonl.jsonl import parse_line

HEADER_SCAN_LIMIT = 1024 * 1024


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


def _dt(ms: float) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def read_header(path: str) -> dict[str, Any] | None:
    """The session header of a file, reading only up to its first parsed line; None if not a
    session (unreadable files are not sessions: discovery must not fail on one bad file)."""
    try:
        with open(path, "rb") as handle:
            scanned = 0
            for line in handle:
                scanned += len(line)
                if scanned > HEADER_SCAN_LIMIT:
                    return None
                if not line.strip():
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


def find_most_recent(session_dir: str, cwd: str | None = None) -> str | None:
    """Newest file by mtime whose header parses (and whose cwd matches, for shared dirs)."""
    files = []
    for path in _jsonl_files(session_dir):
        try:
            files.append((os.stat(path).st_mtime, path))
        except OSError:
            continue
    for _mtime, path in sorted(files, reverse=True):
        header = read_header(path)
        if header is not None and (cwd is None or _cwd_matches(header, cwd)):
            return path
    return None


def find_by_id(session_dir: str, session_id: str, cwd: str | None = None) -> str | None:
    """The file in ``session_dir`` whose header id is exactly ``session_id``."""
    for path in _jsonl_files(session_dir):
        header = read_header(path)
        if header is not None and header["id"] == session_id and (cwd is None or _cwd_matches(header, cwd)):
            return path
    return None


def find_by_prefix(
    directories: list[str], prefix: str, cwd: str | None = None
) -> tuple[str, dict[str, Any]] | None:
    """Exact id first, then the most recently modified file whose id starts with ``prefix``."""
    candidates: list[tuple[float, str, dict[str, Any]]] = []
    for directory in directories:
        for path in _jsonl_files(directory):
            header = read_header(path)
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


def session_info(path: str) -> SessionInfo | None:
    """Summarise one file (one pass over its lines)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
            mtime = os.fstat(handle.fileno()).st_mtime
    except OSError:
        return None
    header: dict[str, Any] | None = None
    count = 0
    first = ""
    texts: list[str] = []
    name: str | None = None
    last_activity = 0.0
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError:
            entry = parse_line(line)
        if not isinstance(entry, dict):
            continue
        if header is None:
            if not jsonl.is_header(entry):
                return None
            header = entry
            continue
        kind = entry.get("type")
        if kind == "session_info":
            name = session_info_name(entry)
        if kind != "message":
            continue
        count += 1
        message = entry.get("message")
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            continue
        stamp = message.get("timestamp")
        activity = stamp if isinstance(stamp, (int, float)) else iso_to_ms(entry.get("timestamp"))
        last_activity = max(last_activity, activity or 0)
        text = _text(message.get("content"))
        if not text:
            continue
        texts.append(text)
        if not first and message.get("role") == "user":
            first = text
    if header is None:
        return None
    created_ms = iso_to_ms(header.get("timestamp"))
    if last_activity > 0:
        modified = _dt(last_activity)
    elif created_ms:
        modified = _dt(created_ms)
    else:
        modified = datetime.fromtimestamp(mtime, UTC)
    return SessionInfo(
        path=path,
        id=header["id"],
        cwd=header.get("cwd") if isinstance(header.get("cwd"), str) else "",
        created=_dt(created_ms) if created_ms else modified,
        modified=modified,
        message_count=count,
        first_message=first or "(no messages)",
        all_messages_text=" ".join(texts),
        name=name,
        parent_session_path=header.get("parentSession")
        if isinstance(header.get("parentSession"), str)
        else None,
    )


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def list_sessions(
    cwd: str,
    agent_dir: str,
    session_dir: str | None = None,
    all_dirs: bool = False,
) -> list[SessionInfo]:
    """Sessions of ``cwd`` (or of every directory), newest activity first.

    With a custom session directory shared by several projects, only sessions whose header cwd is
    ``cwd`` are listed (unless ``all_dirs``).
    """
    from pi_session_jsonl.paths import resolve_session_dir

    directory, custom = resolve_session_dir(agent_dir, cwd, session_dir)
    if all_dirs:
        directories = [directory] if custom else all_session_dirs(agent_dir)
        filter_cwd = None
    else:
        directories = [directory]
        filter_cwd = os.path.abspath(cwd) if custom else None
    infos = []
    for each in directories:
        for path in _jsonl_files(each):
            info = session_info(path)
            if info is None:
                continue
            if filter_cwd is not None and os.path.normpath(info.cwd) != os.path.normpath(filter_cwd):
                continue
            infos.append(info)
    infos.sort(key=lambda info: info.modified, reverse=True)
    return infos


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
    if not answer.isdigit() or not 1 <= int(answer) <= len(sessions):
        raise SessionOpenError(f"No session selected: {answer!r} is not a number from 1 to {len(sessions)}")
    return sessions[int(answer) - 1]
