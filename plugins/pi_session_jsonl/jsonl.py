"""Reading and encoding pi's JSONL session files (reference §6.2, §6.7, §6.9).

Reading is one pass over the bytes: fixed-size chunks are split on ``\\n`` and each line is parsed
with orjson (stdlib json only as the fallback for what orjson refuses, such as integers beyond 64
bits). The garbage collector is paused while the parsed dicts pile up and they are frozen after
(:func:`pi_host.lib.sessions.tree.bulk_allocation`): with tens of thousands of entries its repeated
full scans cost more than the parsing itself.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from pi_host.lib.sessions.tree import bulk_allocation

CHUNK_SIZE = 4 * 1024 * 1024


class BadSessionFile(Exception):
    """The file is not a session file (its first parsed line is not a session header)."""


@dataclass
class LoadedFile:
    header: dict[str, Any] | None
    entries: list[dict[str, Any]] = field(default_factory=list)
    version: int = 3
    missing_final_newline: bool = False
    skipped: list[int] = field(default_factory=list)
    """1-based line numbers of malformed lines that were skipped."""
    size: int = 0


def parse_line(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        try:
            return json.loads(line)  # e.g. integers orjson cannot hold
        except ValueError:
            return None


def encode(entry: dict[str, Any]) -> bytes:
    """One JSONL line (with its ``\\n``), compact like ``JSON.stringify``."""
    try:
        return orjson.dumps(entry) + b"\n"
    except TypeError:
        return (
            json.dumps(entry, ensure_ascii=False, separators=(",", ":"), default=_jsonable).encode() + b"\n"
        )


def _jsonable(value: Any) -> Any:
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_json()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def read_fd(fd: int, path: str) -> LoadedFile:
    """Parse a session file from an open descriptor (read from offset 0)."""
    with bulk_allocation():
        return _read(fd, path)


def _read(fd: int, path: str) -> LoadedFile:
    loaded = LoadedFile(header=None)
    entries = loaded.entries
    skipped = loaded.skipped
    header: dict[str, Any] | None = None
    line_no = 0
    pending = b""
    offset = 0
    while True:
        chunk = os.pread(fd, CHUNK_SIZE, offset)
        if not chunk:
            break
        offset += len(chunk)
        if pending:
            chunk = pending + chunk
        lines = chunk.split(b"\n")
        pending = lines.pop()
        for line in lines:
            line_no += 1
            header = _take(line, line_no, header, entries, skipped, path)
        del lines, chunk
    loaded.size = offset
    if pending:
        loaded.missing_final_newline = True
        line_no += 1
        header = _take(pending, line_no, header, entries, skipped, path)
    loaded.header = header
    if header is not None:
        version = header.get("version")
        loaded.version = version if isinstance(version, int) else 1
    return loaded


def is_header(value: Any) -> bool:
    """Whether a parsed first line is a session header (``type: session`` with a string id)."""
    return isinstance(value, dict) and value.get("type") == "session" and isinstance(value.get("id"), str)


def _take(
    line: bytes,
    line_no: int,
    header: dict[str, Any] | None,
    entries: list[dict[str, Any]],
    skipped: list[int],
    path: str,
) -> dict[str, Any] | None:
    if not line.strip():
        return header
    value = parse_line(line)
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        skipped.append(line_no)
        return header
    if header is None:
        if not is_header(value):
            raise BadSessionFile(f"Not a pi session file (the first line is not a session header): {path}")
        return value
    entries.append(value)
    return header


def validate_entries(loaded: LoadedFile, warn: Callable[[str], None]) -> None:
    """Drop entries a v3 tree cannot hold (no string id); warn about everything skipped."""
    if loaded.version >= 3:
        good = [e for e in loaded.entries if isinstance(e.get("id"), str)]
        if len(good) != len(loaded.entries):
            warn(f"skipped {len(loaded.entries) - len(good)} entries without an id")
            loaded.entries[:] = good
    if loaded.skipped:
        shown = ", ".join(str(n) for n in loaded.skipped[:5])
        more = f" and {len(loaded.skipped) - 5} more" if len(loaded.skipped) > 5 else ""
        warn(f"skipped malformed line {shown}{more} (truncated or corrupt write)")


def migrate(loaded: LoadedFile, new_id: Callable[[set[str]], str]) -> bool:
    """Bring v1/v2 entries to v3 in place (§6.9). Returns True when anything changed."""
    if loaded.header is None or loaded.version >= 3:
        return False
    entries = loaded.entries
    if loaded.version < 2:
        taken: set[str] = set()
        previous: str | None = None
        for entry in entries:
            entry_id = new_id(taken)
            taken.add(entry_id)
            entry["id"] = entry_id
            entry["parentId"] = previous
            previous = entry_id
        for entry in entries:
            if entry.get("type") == "compaction" and isinstance(entry.get("firstKeptEntryIndex"), int):
                # The index counts the header as entry 0, as the v1 file list did.
                index = entry.pop("firstKeptEntryIndex")
                if 1 <= index <= len(entries):
                    entry["firstKeptEntryId"] = entries[index - 1]["id"]
    for entry in entries:
        if entry.get("type") == "message":
            message = entry.get("message")
            if isinstance(message, dict) and message.get("role") == "hookMessage":
                message["role"] = "custom"
    loaded.header["version"] = 3
    loaded.version = 3
    return True


def write_atomic(path: str, header: dict[str, Any], entries: list[dict[str, Any]], mode: int = 0o600) -> None:
    """Write a whole file through a temporary file in the same directory, then rename it."""
    directory = os.path.dirname(path) or "."
    temp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        write_all(fd, b"".join([encode(header), *(encode(e) for e in entries)]))
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(temp)
        raise
    os.close(fd)
    os.replace(temp, path)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
