"""Session selection flags: --continue, --session, --session-id, --fork, --no-session, --name,
--resume (reference §6.8; §11 items 42, 48)."""

from __future__ import annotations

import io
import os
import re
import time

import pytest
from pi_session_jsonl import listing
from pi_session_jsonl.paths import default_session_dir, encode_cwd
from pi_session_jsonl.resolve import open_store

from pi_host.lib.sessions.store import MemoryStore, SessionOpenError, StoreOptions
from pi_host.protocol import UserMessage
from tests.support.session_files import read_jsonl


@pytest.fixture
def env(isolated_environment):
    work = str(isolated_environment["work"])
    agent = str(isolated_environment["agent"])
    return work, agent


def opts(env, **kwargs) -> StoreOptions:
    work, agent = env
    return StoreOptions(cwd=kwargs.pop("cwd", work), agent_dir=agent, **kwargs)


def make_session(env, text: str, **kwargs) -> str:
    store = open_store(opts(env, **kwargs))
    store.append({"type": "message", "message": UserMessage(content=text).to_json()})
    store.close()
    return store.session_file


def test_location_and_naming(env):
    work, agent = env
    assert encode_cwd("/home/dev/kite") == "--home-dev-kite--"
    path = make_session(env, "hi")
    assert os.path.dirname(path) == os.path.join(agent, "sessions", encode_cwd(work))
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f-]{36}\.jsonl", os.path.basename(path))


def test_continue_opens_newest_by_mtime_or_starts_new(env):
    fresh = open_store(opts(env, continue_recent=True))
    assert fresh.entries() == [] and not os.path.exists(fresh.session_file)
    fresh.close()
    older = make_session(env, "older")
    newer = make_session(env, "newer")
    os.utime(older, (time.time() + 100, time.time() + 100))
    store = open_store(opts(env, continue_recent=True))
    assert store.session_file == older
    store.close()
    os.utime(newer, (time.time() + 200, time.time() + 200))
    store = open_store(opts(env, continue_recent=True))
    assert store.session_file == newer
    store.close()


def test_session_by_path_prefix_and_no_match(env):
    path = make_session(env, "target")
    session_id = read_jsonl(__import__("pathlib").Path(path))[0]["id"]
    for arg in (path, session_id, session_id[:13]):
        store = open_store(opts(env, session=arg))
        assert store.session_file == path and store.session_id == session_id
        store.close()
    with pytest.raises(SessionOpenError, match="No session found matching 'zzzz'"):
        open_store(opts(env, session="zzzz"))


def test_session_from_another_project_is_not_silently_opened(env, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    path = make_session(env, "elsewhere", cwd=str(other))
    session_id = read_jsonl(__import__("pathlib").Path(path))[0]["id"]
    with pytest.raises(SessionOpenError, match="another project") as info:
        open_store(opts(env, session=session_id[:12]))
    assert f"--fork {session_id[:12]}" in str(info.value)


def test_session_id_opens_existing_or_creates_with_warning(env):
    seen: list[str] = []
    store = open_store(opts(env, session_id="my-session.1", warn=seen.append))
    assert store.session_id == "my-session.1" and seen and "creating a new session" in seen[0]
    store.append({"type": "message", "message": UserMessage(content="x").to_json()})
    store.close()
    again = open_store(opts(env, session_id="my-session.1"))
    assert again.session_file == store.session_file and len(again.entries()) == 1
    again.close()
    with pytest.raises(SessionOpenError, match="Invalid session id"):
        open_store(opts(env, session_id="-bad"))


def test_flag_conflicts(env):
    with pytest.raises(SessionOpenError, match="--fork cannot be combined with --session, --continue"):
        open_store(opts(env, fork="x", session="y", continue_recent=True))
    with pytest.raises(SessionOpenError, match="--fork cannot be combined with --resume, --no-session"):
        open_store(opts(env, fork="x", no_session=True, resume=True))
    with pytest.raises(SessionOpenError, match="--session-id cannot be combined with --continue"):
        open_store(opts(env, session_id="abc", continue_recent=True))


def test_fork_copies_entries_into_a_new_session(env):
    source = make_session(env, "original")
    source_entries = read_jsonl(__import__("pathlib").Path(source))
    store = open_store(opts(env, fork=source_entries[0]["id"][:10]))
    assert store.session_id != source_entries[0]["id"]
    assert store.header["parentSession"] == source
    lines = read_jsonl(__import__("pathlib").Path(store.session_file))
    assert lines[1:] == source_entries[1:]
    store.close()
    with pytest.raises(SessionOpenError, match="already exists"):
        open_store(opts(env, fork=source, session_id=store.session_id))
    named = open_store(opts(env, fork=source, session_id="fork-name"))
    assert named.session_id == "fork-name"
    named.close()


def test_no_session_keeps_everything_in_memory(env):
    work, agent = env
    store = open_store(opts(env, no_session=True, name="scratch"))
    assert isinstance(store, MemoryStore) and store.session_file is None
    store.append({"type": "message", "message": UserMessage(content="x").to_json()})
    assert store.name == "scratch"
    assert not os.path.exists(os.path.join(agent, "sessions"))


def test_name_is_normalised_and_appended(env):
    store = open_store(opts(env, name="  two\nlines  "))
    assert store.entries()[0]["type"] == "session_info" and store.name == "two lines"
    store.close()


def test_session_dir_override_and_shared_dir_cwd_filter(env, tmp_path):
    shared = str(tmp_path / "shared")
    other = tmp_path / "p2"
    other.mkdir()
    mine = make_session(env, "mine", session_dir=shared)
    theirs = make_session(env, "theirs", session_dir=shared, cwd=str(other))
    assert os.path.dirname(mine) == shared == os.path.dirname(theirs)
    os.utime(theirs, (time.time() + 100, time.time() + 100))
    store = open_store(opts(env, session_dir=shared, continue_recent=True))
    assert store.session_file == mine  # the newer file belongs to another cwd
    store.close()
    work, agent = env
    infos = listing.list_sessions(work, agent, shared)
    assert [i.path for i in infos] == [mine]


def test_list_sessions_fields(env):
    work, agent = env
    path = make_session(env, "first prompt", name="Named")
    info = listing.list_sessions(work, agent)[0]
    data = info.to_json()
    assert data["path"] == path and data["name"] == "Named" and data["firstMessage"] == "first prompt"
    assert data["messageCount"] == 1 and data["cwd"] == work


def test_resume_picker_non_interactive(env, monkeypatch):
    work, agent = env
    first = make_session(env, "first")
    second = make_session(env, "second")
    infos = listing.list_sessions(work, agent)
    assert {i.path for i in infos} == {first, second}
    err = io.StringIO()
    chosen = listing.pick_session(infos, interactive=False, stdin=io.StringIO("2\n"), stderr=err)
    assert chosen is infos[1]
    assert "  1. " in err.getvalue() and "  2. " in err.getvalue()
    with pytest.raises(SessionOpenError, match="needs a session number on stdin"):
        listing.pick_session(infos, interactive=False, stdin=io.StringIO(""), stderr=io.StringIO())
    with pytest.raises(SessionOpenError, match="not a number from 1 to 2"):
        listing.pick_session(infos, interactive=False, stdin=io.StringIO("7\n"), stderr=io.StringIO())
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n"))
    monkeypatch.setattr("sys.stderr", io.StringIO())
    store = open_store(opts(env, resume=True, interactive=False))
    assert store.session_file == infos[0].path
    store.close()


def test_default_dir_helper(env):
    work, agent = env
    assert default_session_dir(agent, work).startswith(os.path.join(agent, "sessions", "--"))
