"""find: names that are not UTF-8 are matched, walked into and shown with U+FFFD."""

from __future__ import annotations

import os

import pi_tool_find
import pytest

from tests.support.tools import run, text_of


@pytest.fixture
def folder(tmp_path):
    """A fresh directory (the autouse fixture puts home/agent/work under tmp_path itself)."""
    directory = tmp_path / "listing"
    directory.mkdir()
    return directory


def touch(path: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(b"x")


async def test_latin1_names_are_found_and_latin1_directories_walked(folder):
    root = os.fsencode(folder)
    touch(os.path.join(root, b"caf\xe9.txt"))
    os.mkdir(os.path.join(root, b"d\xe9j\xe0"))
    touch(os.path.join(root, b"d\xe9j\xe0", b"inner.txt"))
    touch(os.path.join(root, b"plain.txt"))
    result = await run(pi_tool_find.create_tool(), {"pattern": "*.txt"}, str(folder))
    assert text_of(result).splitlines() == ["caf\ufffd.txt", "plain.txt", "d\ufffdj\ufffd/inner.txt"]
    text_of(result).encode("utf-8")


async def test_a_glob_still_matches_the_valid_part_of_a_bad_name(folder):
    touch(os.path.join(os.fsencode(folder), b"caf\xe9.md"))
    result = await run(pi_tool_find.create_tool(), {"pattern": "caf*"}, str(folder))
    assert text_of(result) == "caf\ufffd.md"


async def test_an_ignored_latin1_name_stays_ignored(folder):
    root = os.fsencode(folder)
    touch(os.path.join(root, b"caf\xe9.log"))
    touch(os.path.join(root, b"keep.txt"))
    (folder / ".gitignore").write_text("*.log\n")
    result = await run(pi_tool_find.create_tool(), {"pattern": "*"}, str(folder))
    assert text_of(result).splitlines() == [".gitignore", "keep.txt"]
