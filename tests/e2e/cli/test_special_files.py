"""FIFOs, devices and sockets: refused with one line, never opened in a way that blocks.

Opening a FIFO waits for its other end; a tool stuck there used to hang the whole process
(and a worker thread ignores SIGTERM). Every test here would hang without the fix, so each one
runs under a short deadline.
"""

from __future__ import annotations

import os
import stat

import pytest

from pi_host.lib.toolkit import (
    find_ripgrep,
)
from tests.support.tools import end_text, pi_cli, tool_ends

needs_rg = pytest.mark.skipif(find_ripgrep() is None, reason="rg not installed")


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


@needs_rg
def test_cli_tools_on_fifos_finish_within_seconds(tree):
    calls = [
        {"name": "edit", "arguments": {"path": "pipe", "edits": [{"oldText": "a", "newText": "b"}]}},
        {"name": "write", "arguments": {"path": "link", "content": "x"}},
        {"name": "read", "arguments": {"path": "pipe"}},
        {"name": "grep", "arguments": {"pattern": "needle"}},
        {"name": "grep", "arguments": {"pattern": "x", "path": "pipe"}},
        {"name": "find", "arguments": {"pattern": "*.txt"}},
        {"name": "ls", "arguments": {}},
    ]
    script = [{"toolCalls": calls}, {"text": "done"}]
    done, seconds = pi_cli(
        "--mode", "json", "-p", "--tools", "read,bash,edit,write,grep,find,ls", "go", script=script, cwd=str(tree)
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert seconds < 15
    assert done.stderr == ""
    results = {(e["toolName"], e["toolCallId"]): e for e in tool_ends(done.stdout)}
    by_order = [results[key] for key in sorted(results, key=lambda k: k[1])]
    texts = [(e["toolName"], e["isError"], end_text(e)) for e in by_order]
    fifo = "it is a FIFO (named pipe), not a regular file"
    assert texts == [
        ("edit", True, f"Cannot edit pipe: {fifo}"),
        ("write", True, f"Cannot write link: {fifo}"),
        ("read", True, f"Cannot read pipe: {fifo}"),
        ("grep", False, "sub/a.txt:1: needle here"),
        ("grep", True, f"Cannot search pipe: {fifo}"),
        ("find", False, "notes.txt\nsub/a.txt"),
        ("ls", False, "link\nnotes.txt\npipe\nsub/"),
    ]
    assert stat.S_ISFIFO(os.stat(tree / "pipe").st_mode)
