"""ls: names that are not UTF-8 are listed with U+FFFD, never fail the listing."""

from __future__ import annotations

import os

import pi_tool_ls
import pytest

from tests.support.tools import run, text_of


@pytest.fixture
def folder(tmp_path):
    """A fresh directory (the autouse fixture puts home/agent/work under tmp_path itself)."""
    directory = tmp_path / "listing"
    directory.mkdir()
    return directory


def make(directory, name: bytes, is_dir: bool = False) -> None:
    path = os.path.join(os.fsencode(directory), name)
    if is_dir:
        os.mkdir(path)
    else:
        with open(path, "wb") as handle:
            handle.write(b"x")


async def test_latin1_names_are_shown_with_replacement_characters(folder):
    make(folder, b"caf\xe9.txt")
    make(folder, b"d\xe9j\xe0", is_dir=True)
    make(folder, b"zed.txt")
    result = await run(pi_tool_ls.create_tool(), {}, str(folder))
    assert text_of(result).splitlines() == ["caf\ufffd.txt", "d\ufffdj\ufffd/", "zed.txt"]
    text_of(result).encode("utf-8")  # the text is UTF-8 clean: the session and JSON take it


async def test_a_truncated_sequence_is_one_replacement_character_as_node_decodes_it(folder):
    make(folder, b"euro\xe2\x82.txt")  # the first two bytes of U+20AC, nothing after
    result = await run(pi_tool_ls.create_tool(), {}, str(folder))
    assert text_of(result) == "euro\ufffd.txt"


async def test_valid_utf8_names_are_unchanged(folder):
    (folder / "café €.txt").write_text("")
    result = await run(pi_tool_ls.create_tool(), {}, str(folder))
    assert text_of(result) == "café €.txt"
