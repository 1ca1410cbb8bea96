"""Where the built-in tools touch the outside world, behind three small interfaces.

The tools (``read``, ``write``, ``edit``, ``ls``, ``find`` use :class:`FileSystem`; ``bash`` uses
:class:`Shell`; ``grep`` uses :class:`FileSystem` and :class:`Searcher`) hold all their logic —
argument handling, truncation, notices, edit matching — and call only these methods for I/O. A
plugin that wants the same tools over SSH or inside a container implements the interface and
passes it to the tool's factory (``pi_tool_read.create_tool(fs=...)``); nothing else changes.

The ``Local*`` classes are the defaults: the machine pi-host runs on.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import shutil
import signal as signals
import stat as stat_module
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pi_host.protocol.abort import AbortSignal

FileKind = Literal["file", "dir", "other"]


@dataclass
class FileInfo:
    kind: FileKind
    size: int


@dataclass
class DirEntry:
    name: str
    kind: FileKind
    """Following symlinks, so a link to a directory is ``dir``."""
    is_symlink: bool = False


@runtime_checkable
class FileSystem(Protocol):
    """File access for read, write, edit, ls, find (and grep's path check).

    Errors are raised as :class:`OSError` subclasses (``FileNotFoundError``,
    ``PermissionError``, ``NotADirectoryError``...) with ``errno`` set where known.
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
    exit_code: int | None
    """The shell's exit code (128 + N when killed by signal N); None if it never ended."""
    timed_out: bool = False
    aborted: bool = False
    shell_exited_after: float | None = None
    """Seconds until the shell itself exited, when output kept coming after that (background
    processes holding the pipe)."""


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
        return FileInfo(kind=_kind(result.st_mode), size=result.st_size)

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
            with open(path, "rb") as handle:
                if offset:
                    handle.seek(offset)
                return handle.read(length)

        return await asyncio.to_thread(read)

    async def iter_chunks(self, path: str, chunk_size: int = 1 << 20) -> AsyncIterator[bytes]:
        handle = await asyncio.to_thread(open, path, "rb")
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
            with open(path, "wb") as handle:
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


def default_shell() -> str:
    """``/bin/bash``, else ``bash`` on PATH, else ``sh``."""
    if os.path.exists("/bin/bash"):
        return "/bin/bash"
    return shutil.which("bash") or "sh"


def kill_process_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid`` (falling back to the process alone)."""
    try:
        os.killpg(pid, signals.SIGKILL)
    except OSError:
        try:
            os.kill(pid, signals.SIGKILL)
        except OSError:
            pass


@dataclass
class _RunState:
    timed_out: bool = False
    aborted: bool = False
    killed: asyncio.Event = field(default_factory=asyncio.Event)


class LocalShell:
    """Runs commands on this machine, each in its own process group (session)."""

    kill_grace_seconds = 2.0
    """After a kill, how long to wait for the pipe to close (a process that escaped the group
    could hold it open forever)."""

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
        if not os.path.isdir(cwd):
            raise FileNotFoundError(f"Working directory does not exist: {cwd}")
        process = await asyncio.create_subprocess_exec(
            shell or default_shell(),
            "-c",
            command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
        started = time.monotonic()
        state = _RunState()

        def kill(reason: str) -> None:
            setattr(state, reason, True)
            kill_process_group(process.pid)
            state.killed.set()

        remove = signal.add_listener(lambda: kill("aborted")) if signal is not None else (lambda: None)
        loop = asyncio.get_running_loop()
        timer = loop.call_later(timeout, kill, "timed_out") if timeout else None
        exited_at: list[float] = []

        def note_exit() -> None:
            # ``returncode`` is set as soon as the shell is reaped, even while background
            # processes still hold the output pipe open.
            if not exited_at and process.returncode is not None:
                exited_at.append(time.monotonic())

        assert process.stdout is not None
        try:
            await self._pump(process.stdout, on_data, state.killed, note_exit)
            grace = self.kill_grace_seconds if state.killed.is_set() else None
            try:
                await asyncio.wait_for(process.wait(), grace)
            except TimeoutError:
                pass
        finally:
            if timer is not None:
                timer.cancel()
            remove()
            if process.returncode is None:
                kill_process_group(process.pid)
        code = process.returncode
        if code is not None and code < 0:
            code = 128 - code
        shell_exit = None
        if exited_at and time.monotonic() - exited_at[0] > 0.5:
            shell_exit = exited_at[0] - started
        return ExecResult(
            exit_code=code,
            timed_out=state.timed_out,
            aborted=state.aborted,
            shell_exited_after=shell_exit,
        )

    async def _pump(
        self,
        stream: asyncio.StreamReader,
        on_data: Callable[[bytes], Any],
        killed: asyncio.Event,
        tick: Callable[[], None],
    ) -> None:
        grace: float | None = None
        while True:
            tick()
            if killed.is_set() and grace is None:
                grace = time.monotonic() + self.kill_grace_seconds
            try:
                wait = None if grace is None else max(0.0, grace - time.monotonic())
                chunk = await asyncio.wait_for(stream.read(65536), 0.25 if wait is None else wait)
            except TimeoutError:
                if grace is not None and time.monotonic() >= grace:
                    return
                continue
            if not chunk:
                return
            result = on_data(chunk)
            if inspect.isawaitable(result):
                await result


def find_ripgrep(agent_dir: str | None = None) -> str | None:
    """The ``rg`` binary: ``<agent dir>/bin``, next to this Python (the ``ripgrep`` wheel puts it
    there), then PATH. Never downloads."""
    name = "rg.exe" if sys.platform == "win32" else "rg"
    candidates = []
    if agent_dir:
        candidates.append(os.path.join(agent_dir, "bin", name))
    candidates.append(os.path.join(os.path.dirname(sys.executable), name))
    for candidate in candidates:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("rg")


class LocalSearcher:
    """ripgrep on this machine."""

    def __init__(self, rg_path: str | None = None, agent_dir: str | None = None) -> None:
        self.rg_path = rg_path
        self.agent_dir = agent_dir

    async def ripgrep(
        self,
        args: list[str],
        *,
        cwd: str,
        on_line: Callable[[bytes], bool],
        signal: AbortSignal | None = None,
    ) -> SearchResult:
        binary = self.rg_path or find_ripgrep(self.agent_dir)
        if binary is None:
            raise FileNotFoundError(
                "ripgrep (rg) is not available: install the 'ripgrep' package or put rg on PATH"
            )
        process = await asyncio.create_subprocess_exec(
            binary,
            *args,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        remove = (
            signal.add_listener(lambda: kill_process_group(process.pid))
            if signal is not None
            else (lambda: None)
        )
        stopped = False
        assert process.stdout is not None and process.stderr is not None
        stderr_task = asyncio.ensure_future(process.stderr.read())
        try:
            while True:
                try:
                    line = await process.stdout.readuntil(b"\n")
                except asyncio.IncompleteReadError as exc:
                    line = exc.partial
                    if line and not on_line(line):
                        stopped = True
                    break
                except asyncio.LimitOverrunError:
                    # A line longer than the stream buffer: read it in pieces.
                    line = await _read_long_line(process.stdout)
                if not on_line(line.rstrip(b"\n")):
                    stopped = True
                    break
        finally:
            remove()
            if stopped or (signal is not None and signal.aborted):
                kill_process_group(process.pid)
            await process.wait()
            stderr = (await stderr_task).decode("utf-8", errors="replace")
        if signal is not None:
            signal.throw_if_aborted()
        return SearchResult(exit_code=process.returncode, stderr=stderr.strip(), stopped=stopped)


async def _read_long_line(stream: asyncio.StreamReader) -> bytes:
    parts = []
    while True:
        try:
            parts.append(await stream.readuntil(b"\n"))
            return b"".join(parts)
        except asyncio.LimitOverrunError as exc:
            parts.append(await stream.readexactly(exc.consumed))
        except asyncio.IncompleteReadError as exc:
            parts.append(exc.partial)
            return b"".join(parts)
