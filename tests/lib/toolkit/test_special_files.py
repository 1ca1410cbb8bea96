"""FIFOs, devices and sockets: refused with one line, never opened in a way that blocks.

Opening a FIFO waits for its other end; a tool stuck there used to hang the whole process
(and a worker thread ignores SIGTERM). Every test here would hang without the fix, so each one
runs under a short deadline.
"""

from __future__ import annotations

import asyncio
import os
import socket
import stat

import pi_tool_edit
import pi_tool_find
import pi_tool_grep
import pi_tool_ls
import pi_tool_read
import pi_tool_write
import pytest

from pi_host.lib.toolkit import (
    FileInfo,
    LocalFileSystem,
    NotRegularFileError,
    find_ripgrep,
    open_regular,
    special_kind,
)
from pi_host.lib.toolkit.fifo_release import release_ignore_fifos
from tests.support.tools import run, run_error, text_of

needs_rg = pytest.mark.skipif(find_ripgrep() is None, reason="rg not installed")


def within(seconds: float, coro):
    return asyncio.wait_for(coro, seconds)


@pytest.fixture
def tree(tmp_path):
    """A FIFO at the top, a FIFO as a subdirectory's .gitignore, a link to a FIFO, a socket."""
    root = tmp_path / "tree"
    (root / "sub").mkdir(parents=True)
    os.mkfifo(root / "pipe")
    os.mkfifo(root / "sub" / ".gitignore")
    (root / "sub" / "a.txt").write_text("needle here\n")
    (root / "notes.txt").write_text("alpha\n")
    os.symlink("pipe", root / "link")
    return root


# -- the toolkit ---------------------------------------------------------------------------------


def test_open_regular_refuses_fifos_and_devices_without_blocking(tree):
    for flags in (os.O_RDONLY, os.O_WRONLY, os.O_WRONLY | os.O_CREAT):
        with pytest.raises(NotRegularFileError) as info:
            open_regular(str(tree / "pipe"), flags)
        assert str(info.value.strerror) == "it is a FIFO (named pipe), not a regular file"
    with pytest.raises(NotRegularFileError, match="character device"):
        open_regular("/dev/null", os.O_WRONLY)
    with pytest.raises(IsADirectoryError):
        open_regular(str(tree), os.O_RDONLY)
    created = tree / "new.txt"
    fd = open_regular(str(created), os.O_WRONLY | os.O_CREAT)
    try:
        assert os.get_blocking(fd)  # back in blocking mode
        os.write(fd, b"ok")
    finally:
        os.close(fd)
    assert created.read_bytes() == b"ok"


def test_special_kind_names_each_kind(tmp_path):
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(tmp_path / "s.sock"))
        assert special_kind(os.stat(tmp_path / "s.sock").st_mode) == "a socket"
    finally:
        server.close()
    assert special_kind(os.stat("/dev/null").st_mode) == "a character device"
    assert special_kind(stat.S_IFREG) is None and special_kind(stat.S_IFDIR) is None


async def test_local_file_system_reads_and_writes_refuse_a_fifo(tree):
    fs = LocalFileSystem()
    info = await fs.stat(str(tree / "link"))
    assert (info.kind, info.special) == ("other", "a FIFO (named pipe)")
    with pytest.raises(NotRegularFileError):
        await within(5, fs.read_bytes(str(tree / "pipe")))
    with pytest.raises(NotRegularFileError):
        await within(5, fs.write_bytes(str(tree / "link"), b"x"))
    with pytest.raises(NotRegularFileError):
        await within(5, anext(fs.iter_chunks(str(tree / "pipe"))))
    assert stat.S_ISFIFO(os.stat(tree / "pipe").st_mode)


def test_release_ignore_fifos_only_touches_waited_ones(tree):
    # Nobody waits on sub/.gitignore: opening it for writing fails (ENXIO), nothing is released.
    assert release_ignore_fifos(str(tree)) == 0


# -- the tools -----------------------------------------------------------------------------------


async def test_edit_and_write_refuse_a_fifo_before_opening_it(tree):
    message = await within(
        5, run_error(pi_tool_edit.create_tool(), {"path": "pipe", "edits": [{"oldText": "a", "newText": "b"}]}, str(tree))
    )  # fmt: skip
    assert message == "Cannot edit pipe: it is a FIFO (named pipe), not a regular file"
    message = await within(
        5, run_error(pi_tool_write.create_tool(), {"path": "link", "content": "x"}, str(tree))
    )
    assert message == "Cannot write link: it is a FIFO (named pipe), not a regular file"
    message = await within(
        5, run_error(pi_tool_write.create_tool(), {"path": "/dev/null", "content": "x"}, str(tree))
    )
    assert message == "Cannot write /dev/null: it is a character device, not a regular file"
    assert stat.S_ISFIFO(os.stat(tree / "pipe").st_mode)


async def test_tools_refuse_special_files_of_any_file_system(tmp_path):
    class SpecialEverywhere(LocalFileSystem):
        """Says every path is a socket and fails any open: the check must come first."""

        async def stat(self, path):
            return FileInfo(kind="other", size=0)

        async def read_bytes(self, path, offset=0, length=-1):
            raise AssertionError("opened")

        async def write_bytes(self, path, data):
            raise AssertionError("opened")

    fs = SpecialEverywhere()
    message = await run_error(pi_tool_write.create_tool(fs=fs), {"path": "x", "content": "y"}, str(tmp_path))
    assert message == "Cannot write x: it is a device, FIFO or socket, not a regular file"
    edit = pi_tool_edit.create_tool(fs=fs)
    message = await run_error(edit, {"path": "x", "edits": [{"oldText": "a", "newText": "b"}]}, str(tmp_path))
    assert message.startswith("Cannot edit x: it is a device")


async def test_read_names_the_kind(tree):
    message = await within(5, run_error(pi_tool_read.create_tool(), {"path": "link"}, str(tree)))
    assert message == "Cannot read link: it is a FIFO (named pipe), not a regular file"


async def test_ls_and_find_list_a_fifo_and_a_fifo_ignore_file(tree):
    listing = text_of(await within(5, run(pi_tool_ls.create_tool(), {}, str(tree))))
    assert listing.splitlines() == ["link", "notes.txt", "pipe", "sub/"]
    found = text_of(await within(5, run(pi_tool_find.create_tool(), {"pattern": "*"}, str(tree))))
    assert "sub/a.txt" in found.splitlines() and "pipe" in found.splitlines()


@needs_rg
async def test_grep_refuses_a_fifo_path_and_gets_past_a_fifo_ignore_file(tree):
    grep = pi_tool_grep.create_tool()
    message = await within(5, run_error(grep, {"pattern": "x", "path": "pipe"}, str(tree)))
    assert message == "Cannot search pipe: it is a FIFO (named pipe), not a regular file"
    # ripgrep opens sub/.gitignore (a FIFO) and would wait there forever.
    result = await within(10, run(grep, {"pattern": "needle"}, str(tree)))
    assert text_of(result) == "sub/a.txt:1: needle here"


# -- the real command ----------------------------------------------------------------------------
