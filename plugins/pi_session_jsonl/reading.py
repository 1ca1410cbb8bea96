"""Reading a session file for a store, with limits: the header first, then the lines as a stream.

:func:`read_session` is :func:`pi_session_jsonl.jsonl.read_fd` (the same per-line work, the same
:class:`~pi_session_jsonl.jsonl.LoadedFile`) made safe on any file a user can point at:

* **The header is looked for in the first MiB only** (pi's own header scan limit): blank and
  malformed lines before it are skipped as pi skips them, and a file without one there is refused
  after reading that MiB, whatever its size (a 2 GB file of NUL bytes, a log with no newline).
* **No line is held beyond** :data:`~pi_session_jsonl.files.MAX_LINE_BYTES`: a longer one is
  skipped as it streams past (named in one warning), so one endless line cannot fill memory.
* **Long sessions keep no copy of the file.** Undecoded stubs normally keep the blocks they were
  read from; for a file of :data:`FILE_STUBS_MIN_BYTES` or more a stub instead remembers where
  its line is and reads it back from the file when it is used, so resuming costs about the
  entries' ids, not the file's bytes. The reading uses its own descriptor
  (:class:`StubFile`), which the store closes with itself.
"""

from __future__ import annotations

import marshal
import mmap
import os
from dataclasses import dataclass, field
from typing import Any

from pi_host.lib.sessions.stubs import Stubs
from pi_host.lib.sessions.tree import bulk_allocation
from pi_session_jsonl import jsonl
from pi_session_jsonl.files import HEADER_SCAN_LIMIT, MAX_LINE_BYTES, HeaderScanLimit, head_lines

FILE_STUBS_MIN_BYTES = 8 * 1024 * 1024
"""Files at least this big read stub lines back from the file instead of keeping their blocks.
(Issue 36: at 64 MiB a 50 MiB session peaked at 116 MiB, at 8 MiB 62 MiB, for the same CPU
time: the read-back costs a ``pread`` per stub used, a few dozen on a resume. Below this the
kept blocks cost at most that much memory, and a file cut short in place loses nothing.)"""
_READ_BACK = 64 * 1024

SPLIT_MIN_BYTES = 16 * 1024 * 1024
"""Files with at least this much after the header are read by two processes at once, on Linux
(:mod:`pi_session_jsonl.split_read`)."""


class StubFile:
    """A descriptor the stubs of one loaded file read their lines through (until closed)."""

    def __init__(self, fd: int) -> None:
        # A duplicate: the store may close or swap its own descriptor (a file written again).
        self.fd = os.dup(fd)

    def pread(self, size: int, offset: int) -> bytes:
        if self.fd < 0 or size <= 0:
            return b""
        try:
            return os.pread(self.fd, size, offset)
        except OSError:
            return b""  # the stub then stays undecoded: reported as an unusable entry

    def close(self) -> None:
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)

    def __del__(self) -> None:
        self.close()


class FileBlock:
    """A block of the file as the stubs see it (:class:`pi_host.lib.sessions.stubs.Block`),
    read back on demand instead of kept in memory."""

    __slots__ = ("file", "offset", "length")

    def __init__(self, file: StubFile, offset: int, length: int) -> None:
        self.file, self.offset, self.length = file, offset, length

    def __len__(self) -> int:
        return self.length

    def find(self, sub: bytes, start: int = 0, /) -> int:
        """The next newline from ``start`` (the only search stubs make), read in growing pieces."""
        at, piece = start, _READ_BACK
        while at < self.length:
            data = self.file.pread(min(piece, self.length - at), self.offset + at)
            if not data:
                return -1
            found = data.find(sub)
            if found >= 0:
                return at + found
            at += len(data)
            piece = min(piece * 4, MAX_LINE_BYTES)
        return -1

    def __getitem__(self, index: slice, /) -> bytes:
        start, stop, _step = index.indices(self.length)
        return self.file.pread(stop - start, self.offset + start)


@dataclass
class SessionRead(jsonl.LoadedFile):
    """A :class:`~pi_session_jsonl.jsonl.LoadedFile` and what the limits did."""

    long_lines: list[int] = field(default_factory=list)
    """1-based numbers of the lines skipped for being longer than ``MAX_LINE_BYTES``."""
    file: StubFile | None = None
    """Where the stubs read their lines, for a file read without keeping its blocks."""

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


def read_session(fd: int, path: str, stubs: bool = False) -> SessionRead:
    """Parse a session file from an open descriptor (offset 0), within the limits above.

    Raises :class:`~pi_session_jsonl.jsonl.BadSessionFile` when the first parsed line is no
    session header, or when the first MiB holds no header line at all.
    """
    with bulk_allocation():
        return _read(fd, path, stubs)


def _read(fd: int, path: str, stubs: bool) -> SessionRead:
    loaded = SessionRead(header=None, path=path)
    reader = jsonl._Reader(loaded, stubs)
    size = os.fstat(fd).st_size
    offset, line_no, ended = _read_header(fd, path, reader)
    if loaded.header is None or ended:  # (no header: nothing but blank or malformed lines)
        loaded.size = offset
        loaded.missing_final_newline = ended
        _finish(loaded, reader)
        return loaded
    file = StubFile(fd) if stubs and reader.wanted and size >= FILE_STUBS_MIN_BYTES else None
    loaded.file = file
    second = None
    if file is not None and size - offset >= SPLIT_MIN_BYTES:
        from pi_session_jsonl.split_read import SecondPart

        second = SecondPart.start(fd, offset, size, lambda at: _packed_rest(fd, loaded, reader, at, size))
    if second is None:
        scan_range(fd, loaded, reader, offset, size, line_no=line_no)
    else:
        line_no = scan_range(fd, loaded, reader, offset, size, stop=second.boundary, line_no=line_no)
        if not _merge(second.result(), loaded, reader, line_no):  # the helper failed: read the rest here
            scan_range(fd, loaded, reader, second.boundary, size, line_no=line_no)
    _finish(loaded, reader)
    return loaded


def _packed_rest(fd: int, loaded: SessionRead, reader: Any, offset: int, size: int) -> bytes:
    """The file from ``offset`` (a line start) to its end, read as its own part (in the helper
    process) and packed for :func:`_merge`: indexes and line numbers count from the part's start."""
    part = SessionRead(header=loaded.header, path=loaded.path, file=loaded.file)
    part_reader = jsonl._Reader(part, reader.wanted)
    part_reader.stub_min = reader.stub_min
    scan_range(fd, part, part_reader, offset, size)
    blocks = [
        (first, block.offset, block.length) if isinstance(block, FileBlock) else (first, bytes(block))
        for first, block in part_reader.blocks
    ]
    # (one marshal of both lists: a stub is the same dict in entries and in the stubs)
    return marshal.dumps(
        (
            part.entries,
            part.lines,
            sorted(part.bracketed),
            part.skipped,
            part.decoded_indexes,
            part.long_lines,
            part.missing_final_newline,
            part.size,
            part_reader.stubs,
            part_reader.starts,
            blocks,
        )
    )


def _merge(packed: bytes | None, loaded: SessionRead, reader: Any, line_no: int) -> bool:
    """Append a part packed by :func:`_packed_rest` after the ``line_no`` lines read so far;
    False (and nothing changed) when there is no part or it is not one."""
    if packed is None:
        return False
    base, stub_base = len(loaded.entries), len(reader.stubs)
    try:  # (all worked out before anything is changed)
        entries, lines, bracketed, skipped, decoded, long_lines, missing, size, stubs, starts, blocks = (
            marshal.loads(packed)
        )
        lines = [number + line_no for number in lines]
        bracketed = [index + base for index in bracketed]
        skipped = [number + line_no for number in skipped]
        decoded = [index + base for index in decoded]
        long_lines = [number + line_no for number in long_lines]
        kept = [
            (first + stub_base, FileBlock(loaded.file, *where) if len(where) == 2 else where[0])  # type: ignore[arg-type]
            for first, *where in blocks
        ]
        if not (len(lines) == len(entries) and len(starts) == len(stubs) and isinstance(size, int)):
            return False
    except (EOFError, ValueError, TypeError):
        return False
    loaded.entries += entries
    loaded.lines += lines
    loaded.bracketed.update(bracketed)
    loaded.skipped += skipped
    loaded.decoded_indexes += decoded
    loaded.long_lines += long_lines
    loaded.missing_final_newline, loaded.size = bool(missing), size
    reader.stubs += stubs
    reader.starts += starts
    reader.blocks += kept
    return True


def scan_range(
    fd: int,
    loaded: SessionRead,
    reader: Any,
    offset: int,
    size: int,
    stop: int | None = None,
    line_no: int = 0,
) -> int:
    """Read the lines from ``offset`` (a line start) to ``stop`` (a line start) or to the end of
    the file (``size`` bytes when it was opened; it may have grown since) into ``loaded``;
    returns the number of the last line read. Only a read to the end sets the size and what
    ends the file (a last line without its newline, a long line cut by the end)."""
    file = loaded.file
    if stop is not None:
        size = stop
    lean = _Lean(reader, file)
    buffer = _reused_buffer() if file is not None and size - offset >= jsonl.CHUNK_SIZE else None
    pending: list[bytes] = []  # the start of a line that continues in the next block
    pending_bytes = 0
    pending_at = 0  # where that line starts in the file
    skipping = False  # inside a line longer than MAX_LINE_BYTES
    while stop is None or offset < stop:
        block = _block(fd, offset, size, file, buffer, stop)
        if not block:
            break
        at, offset = offset, offset + len(block)
        begin = 0
        if pending or skipping:
            first = block.find(b"\n")
            if first < 0:
                if not skipping and pending_bytes + len(block) > MAX_LINE_BYTES:
                    pending.clear()
                    skipping = True
                if not skipping:
                    pending.append(block[:])  # (a bytes copy of a mapped block)
                    pending_bytes += len(block)
                continue
            line_no += 1
            if skipping or pending_bytes + first > MAX_LINE_BYTES:
                loaded.long_lines.append(line_no)
                skipping = False
            else:
                line = b"".join([*pending, block[: first + 1]])
                mark = len(reader.blocks)
                reader.scan(line, 0, len(line), line_no - 1)
                lean.took(mark, [pending_at])
            pending.clear()
            pending_bytes = 0
            begin = first + 1
        last = block.rfind(b"\n") + 1  # (at least ``begin``)
        mark = len(reader.blocks)
        line_no = reader.scan(block, begin, last, line_no)
        lean.took(mark, [at] * (len(reader.blocks) - mark))
        if last < len(block):
            pending.append(block[last:])
            pending_bytes, pending_at = len(block) - last, at + last
        del block
    if stop is not None:
        return line_no
    loaded.size = offset
    if pending or skipping:
        loaded.missing_final_newline = True
        line_no += 1
        if skipping:
            loaded.long_lines.append(line_no)
        else:
            line = b"".join([*pending, b"\n"])
            mark = len(reader.blocks)
            reader.scan(line, 0, len(line), line_no - 1)
            lean.took(mark, None)
    return line_no


def _read_header(fd: int, path: str, reader: Any) -> tuple[int, int, bool]:
    """Take the lines up to and including the header, within the first :data:`HEADER_SCAN_LIMIT`
    bytes: ``(where the next line starts, the header's line number, whether the header was the
    file's last line and had no newline)``. Without a header the file was all read (it is short)."""
    offset = line_no = 0
    try:
        for line, ended in head_lines(fd):
            line_no += 1
            offset += len(line) + ended
            reader.take(line, line_no)  # raises BadSessionFile for a non-header entry
            if reader.loaded.header is not None:
                return offset, line_no, not ended
    except HeaderScanLimit:
        raise jsonl.BadSessionFile(
            f"Not a pi session file (no session header in its first "
            f"{HEADER_SCAN_LIMIT // (1024 * 1024)} MiB): {path}"
        ) from None
    return offset, line_no, False


def _reused_buffer() -> mmap.mmap:
    """The one buffer a big file's full blocks are read into in turn. Nothing of such a block is
    kept (its stubs read their lines back from the file, a line cut by the block's end is
    copied), so one buffer does, its pages supplied once instead of for each new 4 MiB
    ``bytes`` (~3 ms of a 50 MiB read in a fresh process, and no 4 MiB allocation per block)."""
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_POPULATE", 0)
    return mmap.mmap(-1, jsonl.CHUNK_SIZE, flags=flags)


def _block(
    fd: int, offset: int, size: int, file: StubFile | None, buffer: mmap.mmap | None, stop: int | None
) -> Any:
    if file is None:
        return jsonl._read_block(fd, offset, size)
    if buffer is not None and size - offset >= jsonl.CHUNK_SIZE:
        got = os.preadv(fd, [buffer], offset)
        return buffer if got == jsonl.CHUNK_SIZE else buffer[:got]  # (shrank while read: a copy)
    # the last part of the range (of the file: it may have grown since)
    return os.pread(fd, jsonl.CHUNK_SIZE if stop is None else min(jsonl.CHUNK_SIZE, stop - offset), offset)


class _Lean:
    """What a big file's read keeps of what the reader took, block by block: its blocks become
    :class:`FileBlock`s, read back from the file when a stub is used (the stubs themselves share
    what they can, see ``jsonl._Reader``)."""

    def __init__(self, reader: Any, file: StubFile | None) -> None:
        self.reader, self.file = reader, file

    def took(self, mark: int, offsets: list[int] | None) -> None:
        """After a scan: the blocks kept since ``mark`` are at ``offsets`` in the file (None:
        the last line, without a newline in the file, stays as read)."""
        if self.file is None or offsets is None:
            return
        blocks = self.reader.blocks
        for index in range(mark, len(blocks)):
            first, data = blocks[index]
            blocks[index] = (first, FileBlock(self.file, offsets[index - mark], len(data)))


def _finish(loaded: SessionRead, reader: Any) -> None:
    if reader.wanted:
        loaded.stubs = Stubs(jsonl.parse_line, reader.stubs, reader.starts, reader.blocks)
    header = loaded.header
    if header is not None:
        loaded.version, loaded.version_problem = jsonl.header_version(header.get("version"), loaded.entries)


def warn_long_lines(loaded: SessionRead, warn: Any) -> None:
    """One warning for the lines skipped as too long to hold."""
    if loaded.long_lines:
        shown = ", ".join(str(n) for n in loaded.long_lines[:5])
        more = f" and {len(loaded.long_lines) - 5} more" if len(loaded.long_lines) > 5 else ""
        limit = MAX_LINE_BYTES // (1024 * 1024)
        warn(f"{loaded.path}: skipped line {shown}{more}: longer than {limit} MiB")
