"""A running session's file deleted, cut short or replaced (``pi_session_jsonl.guard``, hardening
item 9): the next append notices, says so in one line and writes the whole session back at the
path; what another program put there is kept beside it unless it is part of this session."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from pi_session_jsonl import reading
from pi_session_jsonl.store import JsonlStore

from tests.support.session_files import read_jsonl


def _say(text: str) -> dict:
    return {"type": "message", "message": {"role": "user", "content": text, "timestamp": 1}}


def _texts(path: Path) -> list[str]:
    """What a resume of ``path`` gives (from a copy: the running store holds the file's lock)."""
    copy = path.parent.parent / "resumed.jsonl"
    shutil.copyfile(path, copy)
    store = JsonlStore.open_file(str(copy), warn=lambda line: pytest.fail(line))
    try:
        return [m.content for m in store.build_context().messages]
    finally:
        store.close()


@pytest.fixture
def session(tmp_path) -> Iterator[tuple[JsonlStore, list[str]]]:
    said: list[str] = []
    store = JsonlStore.create(str(tmp_path), str(tmp_path / "sessions"), warn=said.append)
    store.append(_say("one"))
    store.append(_say("two"))
    yield store, said
    store.close()


def test_an_untouched_file_is_appended_to_in_place(session):
    store, said = session
    path = Path(store.session_file)
    inode = path.stat().st_ino
    store.append(_say("three"))
    assert said == [] and path.stat().st_ino == inode
    assert list(path.parent.iterdir()) == [path]


def test_lines_another_writer_appended_are_kept(session):
    store, said = session
    path = Path(store.session_file)
    with open(path, "a") as other:  # pi (TypeScript) appends by path, without a lock
        other.write(
            '{"type":"label","id":"l1","parentId":null,"timestamp":"2026-12-02T09:14:03.512Z","targetId":"x"}\n'
        )
    store.append(_say("three"))
    assert said == []
    assert [e["type"] for e in read_jsonl(path)] == ["session", "message", "message", "label", "message"]


def test_a_deleted_file_is_written_again_byte_for_byte(session):
    store, said = session
    path = Path(store.session_file)
    before = path.read_bytes()
    path.unlink()
    store.append(_say("three"))
    assert len(said) == 1 and "was deleted" in said[0] and str(path) in said[0]
    assert path.read_bytes().startswith(before)
    assert _texts(path) == ["one", "two", "three"]
    store.append(_say("four"))  # and appends go on to the new file, without another line
    assert len(said) == 1 and _texts(path) == ["one", "two", "three", "four"]


@pytest.mark.parametrize("keep", [0, 1, 150, -1])
def test_a_file_cut_short_in_place_gets_the_whole_session_back(session, keep):
    store, said = session
    path = Path(store.session_file)
    size = path.stat().st_size
    os.truncate(path, keep if keep >= 0 else size - 1)
    store.append(_say("three"))
    assert len(said) == 1 and "cut short" in said[0], said
    assert _texts(path) == ["one", "two", "three"]
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # a prefix of ours: not kept


def test_a_file_edited_in_place_is_kept_beside_the_session(session):
    store, said = session
    path = Path(store.session_file)
    os.truncate(path, 0)
    path.write_bytes(b"someone else's notes\n")  # (shorter than what was written: noticed)
    store.append(_say("three"))
    [aside] = [p for p in path.parent.iterdir() if p != path]
    assert aside.read_bytes() == b"someone else's notes\n"
    assert len(said) == 1 and str(aside) in said[0]
    assert _texts(path) == ["one", "two", "three"]


def test_a_replacement_that_holds_this_session_is_not_kept_twice(session, tmp_path):
    store, said = session
    path = Path(store.session_file)
    copy = tmp_path / "copy"
    shutil.copyfile(path, copy)
    os.replace(copy, path)
    store.append(_say("three"))
    assert len(said) == 1 and "replaced" in said[0] and "kept as" not in said[0]
    assert [p.name for p in path.parent.iterdir()] == [path.name]
    assert _texts(path) == ["one", "two", "three"]


def test_another_file_put_in_its_place_is_kept_beside_it(session, tmp_path):
    store, said = session
    path = Path(store.session_file)
    other = tmp_path / "other"
    other.write_bytes(path.read_bytes() + b'{"type":"custom","id":"zz","parentId":null,"timestamp":"x"}\n')
    theirs = other.read_bytes()
    os.replace(other, path)  # a longer version of the session, from another machine
    store.append(_say("three"))
    [aside] = [p for p in path.parent.iterdir() if p != path]
    assert aside.read_bytes() == theirs and not aside.name.endswith(".jsonl")
    assert len(said) == 1 and str(aside) in said[0]
    assert _texts(path) == ["one", "two", "three"]


def test_a_directory_put_in_its_place_is_moved_aside(session):
    store, said = session
    path = Path(store.session_file)
    path.unlink()
    path.mkdir()
    store.append(_say("three"))
    [aside] = [p for p in path.parent.iterdir() if p != path]
    assert aside.is_dir() and len(said) == 1
    assert _texts(path) == ["one", "two", "three"]


def test_when_it_cannot_be_written_again_the_session_goes_on_and_says_so_once(session):
    store, said = session
    path = Path(store.session_file)
    shutil.rmtree(path.parent)
    path.parent.write_text("a file where the folder was")
    store.append(_say("three"))
    store.append(_say("four"))
    assert len(said) == 1 and "cannot be written again" in said[0], said
    assert [m.content for m in store.build_context().messages] == ["one", "two", "three", "four"]
    path.parent.unlink()  # the folder can be made again: the next append writes it all
    store.append(_say("five"))
    assert len(said) == 2 and "was deleted" in said[1]
    assert _texts(path) == ["one", "two", "three", "four", "five"]


@contextlib.contextmanager
def _file_stubs() -> Iterator[None]:
    saved = reading.FILE_STUBS_MIN_BYTES
    reading.FILE_STUBS_MIN_BYTES = 0
    try:
        yield
    finally:
        reading.FILE_STUBS_MIN_BYTES = saved


def _reopened(store: JsonlStore, said: list[str]) -> JsonlStore:
    """The session closed and opened again, its stubs read back from the file."""
    for text in ("x" * 400, "y" * 400):  # (lines long enough to load as stubs)
        store.append(_say(text))
    path = store.session_file
    store.close()
    with _file_stubs():
        return JsonlStore.open_file(path, warn=said.append)


def test_a_deleted_big_session_is_copied_back_from_the_open_file(session):
    store, said = session
    store = _reopened(store, said)
    try:
        path = Path(store.session_file)
        path.unlink()
        store.append(_say("three"))
        assert len(said) == 1 and "missing" not in said[0]
        assert _texts(path) == ["one", "two", "x" * 400, "y" * 400, "three"]
    finally:
        store.close()


def test_a_big_session_cut_short_keeps_what_it_holds_and_counts_the_rest(session):
    store, said = session
    store.append(_say("x" * 400))
    kept = store.append(_say("y" * 400))
    store.append(
        {"type": "compaction", "summary": "so far", "firstKeptEntryId": kept["id"], "tokensBefore": 1}
    )
    path = store.session_file
    store.close()
    with _file_stubs():
        store = JsonlStore.open_file(path, warn=said.append)
    try:
        before = [m.to_json() for m in store.build_context().messages]  # "x" stays undecoded
        os.truncate(path, 0)
        store.append(_say("three"))
        assert len(said) == 1 and "cut short" in said[0]
        assert "1 older entries could not be read back" in said[0]
        copy = Path(path).parent.parent / "resumed.jsonl"
        shutil.copyfile(path, copy)
        resumed = JsonlStore.open_file(str(copy), warn=said.append)
        after = [m.to_json() for m in resumed.build_context().messages]
        resumed.close()
        assert after[:-1] == before and after[-1]["content"] == "three"
        assert "x" * 400 not in Path(path).read_text()
    finally:
        store.close()
