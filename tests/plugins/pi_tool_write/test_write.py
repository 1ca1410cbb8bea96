"""write: parent directories, overwrite, UTF-8, serialisation with edit."""

from __future__ import annotations

import asyncio

import pi_tool_edit
import pi_tool_write

from tests.support.tools import run, text_of


async def test_creates_parents_and_reports_path(tmp_path):
    result = await run(
        pi_tool_write.create_tool(), {"path": "a/b/c.txt", "content": "héllo\n"}, str(tmp_path)
    )
    assert (tmp_path / "a/b/c.txt").read_bytes() == "héllo\n".encode()
    assert "a/b/c.txt" in text_of(result)
    assert result.details is None


async def test_overwrites_existing_file(tmp_path):
    (tmp_path / "f.txt").write_text("old content that is longer")
    await run(pi_tool_write.create_tool(), {"path": "f.txt", "content": "new"}, str(tmp_path))
    assert (tmp_path / "f.txt").read_text() == "new"


async def test_write_into_a_file_path_fails_clearly(tmp_path):
    (tmp_path / "file").write_text("x")
    try:
        await run(pi_tool_write.create_tool(), {"path": "file/child.txt", "content": "y"}, str(tmp_path))
    except Exception as exc:
        assert "file/child.txt" in str(exc)
    else:
        raise AssertionError("expected an error")


async def test_parallel_writes_and_edits_on_one_file_run_in_request_order(tmp_path):
    write, edit = pi_tool_write.create_tool(), pi_tool_edit.create_tool()
    cwd = str(tmp_path)
    calls = [run(write, {"path": "f.txt", "content": "v0\n"}, cwd)]
    for i in range(20):
        calls.append(
            run(edit, {"path": "f.txt", "edits": [{"oldText": f"v{i}\n", "newText": f"v{i + 1}\n"}]}, cwd)
        )
    results = await asyncio.gather(*calls)
    assert all(not r.is_error for r in results)
    assert (tmp_path / "f.txt").read_text() == "v20\n"


async def test_symlinked_paths_share_one_lock(tmp_path):
    (tmp_path / "real.txt").write_text("a\n")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    edit = pi_tool_edit.create_tool()
    cwd = str(tmp_path)
    await asyncio.gather(
        run(edit, {"path": "real.txt", "edits": [{"oldText": "a\n", "newText": "a\nb\n"}]}, cwd),
        run(edit, {"path": "link.txt", "edits": [{"oldText": "b\n", "newText": "b\nc\n"}]}, cwd),
    )
    assert (tmp_path / "real.txt").read_text() == "a\nb\nc\n"
