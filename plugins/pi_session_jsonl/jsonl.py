"""Reading and encoding pi's JSONL session files (reference §6.2, §6.7, §6.9).

Reading is one pass over the bytes, a block at a time: lines are found in the block with
``bytes.find`` (never split into a list or copied out), and each is parsed with orjson (stdlib
json only as the fallback for what orjson refuses but JavaScript accepts), unless it becomes a
stub (:mod:`pi_host.lib.sessions.stubs`), which keeps its block and is decoded when used. The
garbage collector is paused while the parsed dicts pile up and they are frozen after
(:func:`pi_host.lib.sessions.tree.bulk_allocation`): with tens of thousands of entries its repeated
full scans cost more than the parsing itself.

This module only splits lines and reads JSON: a line that is no JSON object is *malformed* (a torn
write); whether an object is a usable entry is decided when the store builds its tree
(:mod:`pi_host.lib.sessions.validate`), which is also where each unusable one is reported.
"""

from __future__ import annotations

import json
import math
import mmap
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from pi_host.lib.sessions.stubs import Stubs
from pi_host.lib.sessions.tree import bulk_allocation
from pi_host.lib.sessions.validate import MAX_DEPTH

loads = orjson.loads
JSONDecodeError = orjson.JSONDecodeError

CHUNK_SIZE = 4 * 1024 * 1024

STUB_MIN_BYTES = 256
"""Message lines at least this long load as stubs (:mod:`pi_host.lib.sessions.stubs`) when they
start the way pi and pi-host write them: decoding waits until the entry is used."""
_STUB_PREFIX = re.compile(
    rb'\{"type":"message","id":"([^"\\]+)","parentId":(?:null|"([^"\\]+)"),'
    rb'"timestamp":"([^"\\]*)","message":\{"role":"([A-Za-z]+)",'
)


class BadSessionFile(Exception):
    """The file is not a session file (its first parsed line is not a session header)."""


@dataclass
class LoadedFile:
    """A parsed file; also the :class:`pi_host.lib.sessions.validate.EntrySource` of its entries."""

    header: dict[str, Any] | None
    path: str = ""
    entries: list[dict[str, Any]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    """1-based line number of each of ``entries``."""
    bracketed: set[int] = field(default_factory=set)
    """Indexes of entries whose line has enough brackets to nest deeper than ``MAX_DEPTH``."""
    version: float = 3
    version_problem: str | None = None
    """Why the header's ``version`` could not be read (the version was then guessed)."""
    missing_final_newline: bool = False
    skipped: list[int] = field(default_factory=list)
    """1-based line numbers of malformed lines that were skipped."""
    size: int = 0
    stubs: Stubs | None = None
    """The entries loaded as stubs (``read_fd(..., stubs=True)``), None otherwise."""
    decoded_indexes: list[int] = field(default_factory=list)
    """Indexes of the entries that are no stubs (kept only when there are ``stubs``)."""

    def locate(self, index: int) -> str:
        lines = self.lines
        return f"{self.path}:{lines[index]}" if 0 <= index < len(lines) else self.path

    def may_be_deep(self, index: int) -> bool:
        return index in self.bracketed

    def decoded(self) -> list[int] | None:
        return self.decoded_indexes if self.stubs is not None else None

    def rewritten(self, path: str) -> None:
        """The entries were written to ``path`` one a line after the header (migration, fork)."""
        self.path = path
        self.lines = list(range(2, len(self.entries) + 2))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # JSON.parse refuses NaN and Infinity too


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("number out of range")
    return value


def parse_line(line: bytes) -> Any:
    """One JSON value, or None for a malformed line.

    The stdlib parser runs only for what orjson refuses, and keeps what JavaScript's
    ``JSON.parse`` accepts: a lone surrogate escape (pi writes one when a stream cut an emoji).
    Nesting too deep for either parser is a malformed line, never a ``RecursionError``.
    """
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        try:
            return json.loads(line, parse_constant=_reject_constant, parse_float=_finite_float)
        except (ValueError, RecursionError):
            return None


def encode(entry: dict[str, Any]) -> bytes:
    """One JSONL line (with its ``\\n``), byte for byte what ``JSON.stringify`` writes: a model
    object through its ``to_json``, an integer beyond 64 bits in full, a lone surrogate as its
    escape (``\\ud83d``) with every other character raw (:func:`pi_host.lib.wire.json_bytes`)."""
    try:
        return orjson.dumps(entry, default=_jsonable, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:  # orjson.JSONEncodeError: rare, so its encoder is imported only then
        from pi_host.lib.wire import json_bytes

        return json_bytes(entry, default=_jsonable, option=orjson.OPT_APPEND_NEWLINE)


def _jsonable(value: Any) -> Any:
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_json()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def read_fd(fd: int, path: str, stubs: bool = False) -> LoadedFile:
    """Parse a session file from an open descriptor (read from offset 0).

    ``stubs``: long message lines of a v3 file become stub entries (``loaded.stubs``) for a
    tree to fill in when it uses them; without it every line is decoded (rewrites, copies).
    """
    with bulk_allocation():
        return _read(fd, path, stubs)


def _read(fd: int, path: str, stubs: bool = False) -> LoadedFile:
    """One pass over the file, block by block; lines are never split into a list or copied.

    A block is read whole and scanned for newlines in place (``bytes.find``); a stub keeps its
    block and the line's offsets (:class:`Stubs`), so nothing of a long line is copied until it
    is used. Only a line that crosses into the next block is joined into one short ``bytes``.
    """
    loaded = LoadedFile(header=None, path=path)
    reader = _Reader(loaded, stubs)
    line_no = 0
    pending: list[bytes] = []  # the start of a line that continues in the next block
    offset = 0
    size = os.fstat(fd).st_size
    while True:
        block = _read_block(fd, offset, size)
        if not block:
            break
        offset += len(block)
        begin = 0
        if pending:
            first = block.find(b"\n")
            if first < 0:
                pending.append(block[:])  # (a bytes copy of a mapped block)
                continue
            line = b"".join([*pending, block[: first + 1]])
            pending.clear()
            line_no = reader.scan(line, 0, len(line), line_no)
            begin = first + 1
        last = block.rfind(b"\n") + 1  # (at least ``begin``)
        line_no = reader.scan(block, begin, last, line_no)
        if last < len(block):
            pending.append(block[last:])  # (bytes either way; all of a bytes block is not copied)
        del block
    loaded.size = offset
    if pending:
        loaded.missing_final_newline = True
        line = b"".join([*pending, b"\n"])
        line_no = reader.scan(line, 0, len(line), line_no)
    if reader.wanted:
        loaded.stubs = Stubs(parse_line, reader.stubs, reader.starts, reader.blocks)
    header = loaded.header
    if header is not None:
        loaded.version, loaded.version_problem = header_version(header.get("version"), loaded.entries)
    return loaded


POPULATE_MIN_BYTES = 1024 * 1024
_POPULATE = getattr(mmap, "MAP_POPULATE", 0)


def _read_block(fd: int, offset: int, size: int) -> bytes | mmap.mmap:
    """Up to :data:`CHUNK_SIZE` bytes from ``offset`` of a file of ``size`` bytes (it may grow).

    A big block is read into anonymous memory mapped with ``MAP_POPULATE`` (Linux): the kernel
    supplies all its pages in one go instead of one page fault at a time while the read fills
    them, about 10 ms less on a 50 MiB file. Either kind finds, matches and slices alike.
    """
    want = min(CHUNK_SIZE, size - offset)
    if want < POPULATE_MIN_BYTES or not _POPULATE:
        return os.pread(fd, CHUNK_SIZE, offset)
    block = mmap.mmap(-1, want, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _POPULATE)
    got = os.preadv(fd, [block], offset)
    if got == want:
        return block
    short = block[:got]  # the file shrank while it was read
    block.close()
    return short


class _Reader:
    """The per-line work of :func:`_read`: a stub for a long message line, else one JSON value."""

    def __init__(self, loaded: LoadedFile, stubs: bool) -> None:
        self.loaded = loaded
        self.wanted = stubs
        # What becomes Stubs(...): the stub entries, where each line starts in its block, and the
        # blocks (with the index of the first stub in each).
        self.stubs: list[dict[str, Any]] = []
        self.starts: list[int] = []
        self.blocks: list[tuple[int, bytes | mmap.mmap]] = []
        # Until the header is read, and for files of other versions, no line is long enough.
        self.stub_min = _NEVER
        # What stubs share (the tree only reads a stub's placeholder, and filling a stub replaces
        # it): one {"role": ...} dict per role, and a parentId that is the previous stub's id is
        # that same string. About a third less memory for a long session.
        self.roles: dict[str, dict[str, str]] = {}
        self.previous: str | None = None

    def scan(self, data: bytes | mmap.mmap, start: int, stop: int, line_no: int) -> int:
        """Take the lines of ``data[start:stop]`` (which ends with a newline); returns the number of
        the last line taken."""
        entries, lines, stubs, starts = self.loaded.entries, self.loaded.lines, self.stubs, self.starts
        find, match = data.find, _STUB_PREFIX.match
        stub_min, roles, previous = self.stub_min, self.roles, self.previous
        if stub_min < _NEVER:
            self.blocks.append((len(stubs), data))
        while start < stop:
            end = find(b"\n", start)
            line_no += 1
            # The loop below is the hot path of a resume: one bytes.find, one prefix match and
            # one small dict per line of a long session, nothing copied.
            if (
                end - start >= stub_min
                and (prefix := match(data, start, end)) is not None
                and (data[end - 1] == 0x7D or data[start:end].rstrip().endswith(b"}"))
            ):
                entry_id, parent, timestamp, role = prefix.groups()
                try:
                    entry_id, role = entry_id.decode(), role.decode()
                    parent = None if parent is None else parent.decode()
                    entry = {
                        "type": "message",
                        "id": entry_id,
                        "parentId": previous if parent == previous else parent,
                        "timestamp": timestamp.decode(),
                        "message": roles.get(role) or roles.setdefault(role, {"role": role}),
                    }
                except UnicodeDecodeError:
                    pass
                else:
                    previous = entry_id
                    entries.append(entry)
                    lines.append(line_no)
                    stubs.append(entry)
                    starts.append(start)
                    start = end + 1
                    continue
            self.take(data[start:end], line_no)
            if stub_min != self.stub_min:  # the header was read: stubs from the next line on
                stub_min = self.stub_min
                self.blocks.append((len(stubs), data))
            start = end + 1
        self.previous = previous
        return line_no

    def take(self, line: bytes, line_no: int) -> None:
        """One line decoded (the header, short lines, other entry types, odd message lines)."""
        loaded = self.loaded
        if not line or line.isspace():  # (strip() would copy the line)
            return
        try:
            value = loads(line)
        except JSONDecodeError:
            value = parse_line(line)
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            loaded.skipped.append(line_no)
            return
        if loaded.header is None:
            if not is_header(value):
                raise BadSessionFile(
                    f"Not a pi session file (the first line is not a session header): {loaded.path}"
                )
            loaded.header = value
            if self.wanted:
                if value.get("version") == 3:
                    self.stub_min = STUB_MIN_BYTES
                else:
                    self.wanted = False  # older formats are migrated: every entry is needed
            return
        # Nesting deeper than MAX_DEPTH needs that many brackets: counting them is far cheaper
        # than walking every parsed entry, so only the few lines with that many get walked.
        # Message entries (the bulk of a file) are walked when their messages are parsed.
        if (
            len(line) > 2 * MAX_DEPTH
            and value["type"] != "message"
            and line.count(b"{") + line.count(b"[") > MAX_DEPTH
        ):
            loaded.bracketed.add(len(loaded.entries))
        if self.wanted:
            loaded.decoded_indexes.append(len(loaded.entries))
        loaded.entries.append(value)
        loaded.lines.append(line_no)


_NEVER = 1 << 62


def is_header(value: Any) -> bool:
    """Whether a parsed first line is a session header (``type: session`` with a string id)."""
    return isinstance(value, dict) and value.get("type") == "session" and isinstance(value.get("id"), str)


def header_version(value: Any, entries: list[dict[str, Any]]) -> tuple[float, str | None]:
    """The format version a header declares (§6.9), compared as a number as pi does (``"3"`` is
    3); no version is v1. A value that is no number is reported and the version guessed from the
    entries (ids mean v3), because migrating a tree as v1 would flatten it."""
    if value is None:
        return 1, None
    number: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
    if number is not None and math.isfinite(number):
        return number, None
    guess = 3 if any(isinstance(e.get("id"), str) for e in entries) else 1
    why = "its entries have ids" if guess == 3 else "its entries have no ids"
    return (
        guess,
        f"header field version: expected a number, got {_short(value)}; read as v{guess} ({why})",
    )


def _short(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = type(value).__name__
    return text if len(text) <= 40 else text[:39] + "…"


def warn_malformed(loaded: LoadedFile, path: str, warn: Callable[[str], None]) -> None:
    """One warning for an unreadable header version, one for the lines that are no JSON objects
    (torn writes, garbage)."""
    if loaded.version_problem:
        warn(f"{path}:1: {loaded.version_problem}")
    if loaded.skipped:
        shown = ", ".join(str(n) for n in loaded.skipped[:5])
        more = f" and {len(loaded.skipped) - 5} more" if len(loaded.skipped) > 5 else ""
        warn(f"{path}: skipped malformed line {shown}{more} (truncated or corrupt write)")


def version_label(version: float) -> str:
    return f"v{version:g}"


def migrate(loaded: LoadedFile, new_id: Callable[[set[str]], str]) -> bool:
    """Bring v1/v2 entries to v3 in place (§6.9). Returns True when anything changed.

    Every parsed entry is migrated, usable or not, as pi does: the rewrite keeps them all.
    """
    if loaded.header is None or loaded.version >= 3:
        return False
    entries = loaded.entries
    if loaded.version < 2:
        taken: set[str] = set()
        previous: str | None = None
        for entry in entries:
            if entry.get("type") == "session":
                continue  # a stray second header is no tree node (pi skips it too)
            entry_id = new_id(taken)
            taken.add(entry_id)
            entry["id"] = entry_id
            entry["parentId"] = previous
            previous = entry_id
        for entry in entries:
            index = entry.get("firstKeptEntryIndex")
            if entry.get("type") == "compaction" and isinstance(index, int) and not isinstance(index, bool):
                # The index counts the header as entry 0, as the v1 file list did.
                del entry["firstKeptEntryIndex"]
                target = entries[index - 1] if 1 <= index <= len(entries) else None
                if target is not None and isinstance(target.get("id"), str):
                    entry["firstKeptEntryId"] = target["id"]
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
