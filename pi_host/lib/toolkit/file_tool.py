"""The base of tools that work on files through a :class:`~pi_host.lib.toolkit.FileSystem`."""

from __future__ import annotations

from pi_host.lib.toolkit.operations import FileSystem, LocalFileSystem
from pi_host.lib.toolkit.regular import not_regular_text
from pi_host.loop.tools import Tool, ToolError


class FileTool(Tool):
    """A tool over ``fs``: the local disk unless another :class:`FileSystem` is given (a remote
    machine, a container, an in-memory tree for tests)."""

    def __init__(self, fs: FileSystem | None = None) -> None:
        self.fs: FileSystem = fs or LocalFileSystem()

    async def refuse_special(self, path: str, prefix: str) -> None:
        """Raise ``ToolError("<prefix>: it is a FIFO (named pipe), not a regular file")`` when
        ``path`` is a FIFO, device or socket, before anything opens it: opening a FIFO waits for
        its other end forever. A path that cannot be stat'ed passes (the operation reports it)."""
        try:
            info = await self.fs.stat(path)
        except OSError:
            return
        if info.kind == "other":
            raise ToolError(f"{prefix}: {not_regular_text(info.special)}")
