"""ripgrep on this machine (the default :class:`~pi_host.lib.toolkit.Searcher`).

ripgrep skips FIFOs while it walks a tree, but it opens ignore files (``.gitignore``, ``.ignore``,
``.rgignore``, ``.git/info/exclude``) without checking what they are, and a FIFO there blocks it
forever. A watchdog looks at ripgrep's threads; one waiting to open a FIFO gets it released (see
``fifo_release.py``) and the search goes on as if that ignore file were empty.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable

from pi_host.lib.toolkit.fifo_release import release_ignore_fifos, waiting_on_fifo
from pi_host.lib.toolkit.operations import SearchResult
from pi_host.lib.toolkit.processes import kill_process_group
from pi_host.protocol.abort import AbortSignal

WATCH_SECONDS = 0.25


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
    import shutil

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
        watchdog = asyncio.ensure_future(_release_fifo_waits(process.pid, cwd))
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
            watchdog.cancel()
            remove()
            if stopped or (signal is not None and signal.aborted):
                kill_process_group(process.pid)
            await process.wait()
            stderr = (await stderr_task).decode("utf-8", errors="replace")
        if signal is not None:
            signal.throw_if_aborted()
        return SearchResult(exit_code=process.returncode, stderr=stderr.strip(), stopped=stopped)


async def _release_fifo_waits(pid: int, root: str) -> None:
    """While ripgrep runs: whenever one of its threads waits to open a FIFO, release it."""
    while True:
        await asyncio.sleep(WATCH_SECONDS)
        if await asyncio.to_thread(waiting_on_fifo, pid):
            await asyncio.to_thread(release_ignore_fifos, root)


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
