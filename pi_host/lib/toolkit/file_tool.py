"""The base of tools that work on files through a :class:`~pi_host.lib.toolkit.FileSystem`."""

from __future__ import annotations

from pi_host.lib.toolkit.operations import FileSystem, LocalFileSystem
from pi_host.loop.tools import Tool


class FileTool(Tool):
    """A tool over ``fs``: the local disk unless another :class:`FileSystem` is given (a remote
    machine, a container, an in-memory tree for tests)."""

    def __init__(self, fs: FileSystem | None = None) -> None:
        self.fs: FileSystem = fs or LocalFileSystem()
