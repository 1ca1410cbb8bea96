"""The operations interfaces: every file tool works on a non-local FileSystem, bash on a custom
Shell, grep on a custom Searcher. Proves the tools do no local I/O of their own."""

from __future__ import annotations

import errno
import posixpath
from collections.abc import AsyncIterator

import pi_tool_bash
import pi_tool_edit
import pi_tool_find
import pi_tool_grep
import pi_tool_ls
import pi_tool_read
import pi_tool_write

from pi_host.lib.toolkit import DirEntry, ExecResult, FileInfo, FileSystem, Searcher, SearchResult, Shell
from tests.support.tools import run, run_error, text_of

REMOTE = "/remote/project"


class MemoryFileSystem:
    """Files in a dict: stands in for a remote machine."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = dict(files)
        self.dirs = {"/"}
        for path in files:
            self._add_parents(path)

    def _add_parents(self, path: str) -> None:
        parent = posixpath.dirname(path)
        while parent not in self.dirs:
            self.dirs.add(parent)
            parent = posixpath.dirname(parent)

    def lock_key(self, path: str) -> str:
        return posixpath.normpath(path)

    async def stat(self, path: str) -> FileInfo:
        if path in self.dirs:
            return FileInfo("dir", 0)
        if path in self.files:
            return FileInfo("file", len(self.files[path]))
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)

    async def check_access(self, path: str, write: bool = False) -> None:
        await self.stat(path)

    async def read_bytes(self, path: str, offset: int = 0, length: int = -1) -> bytes:
        await self.stat(path)
        data = self.files[path][offset:]
        return data if length < 0 else data[:length]

    async def iter_chunks(self, path: str, chunk_size: int = 1 << 20) -> AsyncIterator[bytes]:
        data = await self.read_bytes(path)
        for start in range(0, len(data), 7):  # tiny chunks exercise the streaming code
            yield data[start : start + 7]

    async def write_bytes(self, path: str, data: bytes) -> None:
        if posixpath.dirname(path) not in self.dirs:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        self.files[path] = data

    async def make_dirs(self, path: str) -> None:
        self._add_parents(path + "/x")

    async def list_dir(self, path: str) -> list[DirEntry]:
        if path not in self.dirs:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        names = {}
        for d in self.dirs:
            if d != path and posixpath.dirname(d) == path:
                names[posixpath.basename(d)] = "dir"
        for f in self.files:
            if posixpath.dirname(f) == path:
                names[posixpath.basename(f)] = "file"
        return [DirEntry(name, kind) for name, kind in names.items()]


def memory_fs() -> MemoryFileSystem:
    return MemoryFileSystem(
        {
            f"{REMOTE}/.gitignore": b"*.log\n",
            f"{REMOTE}/src/app.py": b"print('hi')\r\nx = 1\r\n",
            f"{REMOTE}/notes.txt": b"".join(b"note %d\n" % i for i in range(1, 31)),
            f"{REMOTE}/debug.log": b"noise\n",
        }
    )


def test_protocols_are_satisfied():
    assert isinstance(memory_fs(), FileSystem)


async def test_file_tools_on_a_non_local_filesystem(tmp_path):
    fs = memory_fs()
    cwd = REMOTE  # does not exist locally
    read = pi_tool_read.create_tool(fs=fs)
    result = await run(read, {"path": "notes.txt", "offset": 29}, cwd)
    assert text_of(result) == "note 29\nnote 30\n"
    result = await run(read, {"path": "notes.txt", "offset": 3, "limit": 2}, cwd)
    assert text_of(result).startswith("note 3\nnote 4\n\n[27 more lines")  # 30 lines + the empty last one
    assert "beyond" in await run_error(read, {"path": "notes.txt", "offset": 99}, cwd)

    await run(pi_tool_write.create_tool(fs=fs), {"path": "new/dir/f.txt", "content": "made"}, cwd)
    assert fs.files[f"{REMOTE}/new/dir/f.txt"] == b"made"

    await run(
        pi_tool_edit.create_tool(fs=fs), {"path": "src/app.py", "oldText": "x = 1", "newText": "x = 2"}, cwd
    )
    assert fs.files[f"{REMOTE}/src/app.py"] == b"print('hi')\r\nx = 2\r\n"

    listing = await run(pi_tool_ls.create_tool(fs=fs), {}, cwd)
    assert text_of(listing).splitlines() == [".gitignore", "debug.log", "new/", "notes.txt", "src/"]

    found = await run(pi_tool_find.create_tool(fs=fs), {"pattern": "*"}, cwd)
    assert "debug.log" not in text_of(found)
    assert set(text_of(found).splitlines()) >= {"src/", "src/app.py", "new/dir/f.txt"}


class RecordingShell:
    """A Shell that would run commands in a container: here it records and answers."""

    def __init__(self) -> None:
        self.calls: list[dict] = []

    async def exec(self, command, *, cwd, env, on_data, signal=None, timeout=None, shell=None) -> ExecResult:
        self.calls.append({"command": command, "cwd": cwd, "shell": shell, "timeout": timeout})
        on_data(b"container says hi\n")
        return ExecResult(exit_code=0)


async def test_bash_on_a_custom_shell():
    shell = RecordingShell()
    assert isinstance(shell, Shell)
    result = await run(pi_tool_bash.create_tool(shell=shell), {"command": "uname", "timeout": 5}, REMOTE,
                       settings={"shellPath": "/bin/zsh"})  # fmt: skip
    assert text_of(result) == "container says hi\n"
    assert shell.calls == [{"command": "uname", "cwd": REMOTE, "shell": "/bin/zsh", "timeout": 5.0}]


class CannedSearcher:
    def __init__(self) -> None:
        self.args: list[str] = []

    async def ripgrep(self, args, *, cwd, on_line, signal=None) -> SearchResult:
        self.args = args
        on_line(
            b'{"type":"match","data":{"path":{"text":"./src/app.py"},"lines":{"text":"x = 2\\n"},"line_number":2}}'
        )
        return SearchResult(exit_code=0)


async def test_grep_on_a_custom_searcher():
    searcher = CannedSearcher()
    assert isinstance(searcher, Searcher)
    result = await run(pi_tool_grep.create_tool(fs=memory_fs(), searcher=searcher), {"pattern": "x"}, REMOTE)
    assert text_of(result) == "src/app.py:2: x = 2"
    assert searcher.args[-3:] == ["--", "x", "."]
    assert "--no-require-git" in searcher.args
