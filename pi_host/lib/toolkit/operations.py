"""Where the built-in tools touch the outside world, behind three small interfaces.

The tools (``read``, ``write``, ``edit``, ``ls``, ``find`` use :class:`FileSystem`; ``bash`` uses
:class:`Shell`; ``grep`` uses :class:`FileSystem` and :class:`Searcher`) hold all their logic —
argument handling, truncation, notices, edit matching — and call only these methods for I/O. A
plugin that wants the same tools over SSH or inside a container implements the interface and
passes it to the tool's factory (``pi_tool_read.create_tool(fs=...)``); nothing else changes.

The ``Local*`` classes are the defaults: the machine pi-host runs on (:class:`LocalShell` lives in
``local_shell.py``, :class:`LocalSearcher` in ``local_search.py``).
"""

from __future__ import annotations

import asyncio
import os
import stat as stat_module
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from pi_host.lib.toolkit.regular import open_regular, special_kind
from pi_host.protocol.abort import AbortSignal

FileKind = Literal["file", "dir", "other"]


@dataclass
class FileInfo:
    """What a path is (file, directory, other) and its size."""

    kind: FileKind
    size: int
    special: str | None = None
    """For ``other``: what it is (``a FIFO (named pipe)``, ``a character device``...), for messages."""


@dataclass
class DirEntry:
    """One entry of a directory listing."""

    name: str
    kind: FileKind
    """Following symlinks, so a link to a directory is ``dir``."""
    is_symlink: bool = False


@runtime_checkable
class FileSystem(Protocol):
    """File access for read, write, edit, ls, find (and grep's path check).

    Errors are raised as :class:`OSError` subclasses (``FileNotFoundError``,
    ``PermissionError``, ``NotADirectoryError``...) with ``errno`` set where known.
    ``read_bytes``, ``iter_chunks`` and ``write_bytes`` should refuse FIFOs, devices and sockets
    (:class:`~pi_host.lib.toolkit.NotRegularFileError`) without blocking: opening a FIFO waits
    for its other end.
    """

    def lock_key(self, path: str) -> str:
        """A canonical name for ``path`` (symlinks resolved), used to serialise edits and writes.
        Must not block: it runs before the tool's first await so that calls keep request order."""
        ...

    async def stat(self, path: str) -> FileInfo: ...

    async def check_access(self, path: str, write: bool = False) -> None:
        """Raise unless ``path`` is readable (and writable when ``write``)."""
        ...

    async def read_bytes(self, path: str, offset: int = 0, length: int = -1) -> bytes:
        """``length`` bytes from ``offset`` (all remaining bytes when ``length`` < 0)."""
        ...

    def iter_chunks(self, path: str, chunk_size: int = 1 << 20) -> AsyncIterator[bytes]:
        """The file's bytes in order, one chunk at a time (for files too big to hold)."""
        ...

    async def write_bytes(self, path: str, data: bytes) -> None: ...

    async def make_dirs(self, path: str) -> None:
        """Create ``path`` and its parents; an existing directory is fine."""
        ...

    async def list_dir(self, path: str) -> list[DirEntry]:
        """Entries of a directory (dotfiles included, any order); entries whose stat fails are
        left out."""
        ...


@dataclass
class ExecResult:
    """How a shell command ended: its exit code, and whether it timed out or was aborted."""

    exit_code: int | None
    """The shell's exit code (128 + N when killed by signal N); None if it never ended."""
    timed_out: bool = False
    aborted: bool = False
    shell_exited_after: float | None = None
    """Seconds until the shell itself exited, when output kept coming after that (background
    processes holding the pipe)."""
    output_left_open: list[int] | None = None
    """Set when the shell and its whole process group had exited but processes that left the
    group (``setsid ... &``) still held the output open, so reading stopped after a grace period:
    their pids (empty when they cannot be found)."""


@runtime_checkable
class Shell(Protocol):
    """Runs ``bash``'s commands."""

    async def exec(
        self,
        command: str,
        *,
        cwd: str,
        env: dict[str, str],
        on_data: Callable[[bytes], Any],
        signal: AbortSignal | None = None,
        timeout: float | None = None,
        shell: str | None = None,
    ) -> ExecResult:
        """Run ``<shell> -c <command>`` with stdin closed, stdout and stderr merged in arrival
        order and passed to ``on_data`` (may return an awaitable). On abort or timeout the whole
        process tree is killed and the result says which. ``shell`` None means the default."""
        ...


@dataclass
class SearchResult:
    """How a search command ended: its exit code, what it wrote on stderr, whether it was
    stopped early."""

    exit_code: int | None
    stderr: str = ""
    stopped: bool = False
    """True when ``on_line`` asked to stop early (the exit code is then meaningless)."""


@runtime_checkable
class Searcher(Protocol):
    """Runs ripgrep for ``grep``."""

    async def ripgrep(
        self,
        args: list[str],
        *,
        cwd: str,
        on_line: Callable[[bytes], bool],
        signal: AbortSignal | None = None,
    ) -> SearchResult:
        """Run ``rg <args>`` in ``cwd`` and feed each stdout line (without its newline) to
        ``on_line``; a False return stops the search."""
        ...


# =============================================================================================
# Local implementations
# =============================================================================================


class LocalFileSystem:
    """The local disk. Blocking calls run in worker threads so the event loop stays free."""

    def lock_key(self, path: str) -> str:
        return os.path.realpath(path)

    async def stat(self, path: str) -> FileInfo:
        result = await asyncio.to_thread(os.stat, path)
        mode = result.st_mode
        return FileInfo(kind=_kind(mode), size=result.st_size, special=special_kind(mode))

    async def check_access(self, path: str, write: bool = False) -> None:
        def check() -> None:
            os.stat(path)  # raises FileNotFoundError with errno set
            mode = os.R_OK | (os.W_OK if write else 0)
            if not os.access(path, mode):
                import errno

                raise PermissionError(errno.EACCES, "Permission denied", path)

        await asyncio.to_thread(check)

    async def read_bytes(self, path: str, offset: int = 0, length: int = -1) -> bytes:
        def read() -> bytes:
            with os.fdopen(open_regular(path, os.O_RDONLY), "rb") as handle:
                if offset:
                    handle.seek(offset)
                return handle.read(length)

        return await asyncio.to_thread(read)

    async def iter_chunks(self, path: str, chunk_size: int = 1 << 20) -> AsyncIterator[bytes]:
        handle = await asyncio.to_thread(lambda: os.fdopen(open_regular(path, os.O_RDONLY), "rb"))
        try:
            while True:
                chunk = await asyncio.to_thread(handle.read, chunk_size)
                if not chunk:
                    return
                yield chunk
        finally:
            handle.close()

    async def write_bytes(self, path: str, data: bytes) -> None:
        def write() -> None:
            # Truncated only once it is known to be a regular file.
            fd = open_regular(path, os.O_WRONLY | os.O_CREAT)
            with os.fdopen(fd, "wb") as handle:
                os.ftruncate(fd, 0)
                handle.write(data)

        await asyncio.to_thread(write)

    async def make_dirs(self, path: str) -> None:
        await asyncio.to_thread(os.makedirs, path, exist_ok=True)

    async def list_dir(self, path: str) -> list[DirEntry]:
        return await asyncio.to_thread(_list_dir, path)


def _kind(mode: int) -> FileKind:
    if stat_module.S_ISDIR(mode):
        return "dir"
    if stat_module.S_ISREG(mode):
        return "file"
    return "other"


def _list_dir(path: str) -> list[DirEntry]:
    entries: list[DirEntry] = []
    with os.scandir(path) as iterator:
        for entry in iterator:
            try:
                if entry.is_dir():
                    kind: FileKind = "dir"
                elif entry.is_file():
                    kind = "file"
                else:
                    entry.stat()  # a dangling symlink raises here and is skipped
                    kind = "other"
            except OSError:
                continue
            try:
                link = entry.is_symlink()
            except OSError:
                link = False
            entries.append(DirEntry(entry.name, kind, link))
    return entries
