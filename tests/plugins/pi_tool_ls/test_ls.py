"""ls: dotfiles, case-insensitive order, directory marks, limits, errors."""

from __future__ import annotations

import pi_tool_ls
import pytest

from tests.support.tools import run, run_error, text_of


@pytest.fixture
def listing(tmp_path):
    """A fresh directory (the autouse fixture puts home/agent/work under tmp_path itself)."""
    directory = tmp_path / "listing"
    directory.mkdir()
    return directory


async def test_lists_dotfiles_sorted_case_insensitively(listing):
    for name in ("beta.txt", "Alpha.txt", ".env", "gamma"):
        (listing / name).write_text("")
    (listing / "Dir").mkdir()
    result = await run(pi_tool_ls.create_tool(), {}, str(listing))
    assert text_of(result).splitlines() == [".env", "Alpha.txt", "beta.txt", "Dir/", "gamma"]
    assert result.details is None


async def test_limit_notice(listing):
    for i in range(10):
        (listing / f"f{i}").write_text("")
    result = await run(pi_tool_ls.create_tool(), {"limit": 4}, str(listing))
    assert text_of(result).split("\n\n[")[0].splitlines() == ["f0", "f1", "f2", "f3"]
    assert "limit=8" in text_of(result)
    assert result.details["entryLimitReached"] == 4


async def test_errors_and_empty(listing):
    tool = pi_tool_ls.create_tool()
    assert "not found" in await run_error(tool, {"path": "missing"}, str(listing))
    (listing / "file").write_text("")
    assert "Not a directory" in await run_error(tool, {"path": "file"}, str(listing))
    (listing / "empty").mkdir()
    assert "empty" in text_of(await run(tool, {"path": "empty"}, str(listing)))


async def test_dangling_symlink_skipped(listing):
    (listing / "ok").write_text("")
    (listing / "dangling").symlink_to(listing / "nowhere")
    result = await run(pi_tool_ls.create_tool(), {}, str(listing))
    assert text_of(result) == "ok"
