"""The JSONL file: lazy creation, appends, crash recovery, bad headers, migration, locking,
permissions (reference §6.6, §6.7, §6.9; §11 items 41-45)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from pi_session_jsonl.store import JsonlStore

from pi_host.lib.sessions.store import SessionOpenError, SessionWriteError
from pi_host.protocol import UserMessage
from tests.support.session_files import (
    assistant,
    entry,
    header,
    read_jsonl,
    roles,
    texts,
    tool_result,
    user,
    write_jsonl,
)


def _warnings() -> tuple[list[str], object]:
    seen: list[str] = []
    return seen, seen.append


def test_new_session_file_appears_with_first_user_message(tmp_path):
    store = JsonlStore.create(str(tmp_path), str(tmp_path / "sessions"))
    path = store.session_file
    assert os.path.basename(path).endswith(f"_{store.session_id}.jsonl")
    store.append({"type": "model_change", "provider": "faux", "modelId": "faux-1"})
    store.append({"type": "thinking_level_change", "thinkingLevel": "off"})
    store.append(
        {"type": "message", "message": {"role": "system", "content": "", "sections": {}, "timestamp": 1}}
    )
    assert not os.path.exists(path)
    store.append({"type": "message", "message": UserMessage(content="hi").to_json()})
    lines = read_jsonl(tmp_path / "sessions" / os.path.basename(path))
    assert [line["type"] for line in lines] == [
        "session",
        "model_change",
        "thinking_level_change",
        "message",
        "message",
    ]
    assert lines[0] == store.header and lines[0]["version"] == 3
    assert lines[1]["parentId"] is None and lines[2]["parentId"] == lines[1]["id"]
    assert [list(line)[:4] for line in lines[1:]] == [["type", "id", "parentId", "timestamp"]] * 4
    store.append({"type": "session_info", "name": "later"})
    assert read_jsonl(tmp_path / "sessions" / os.path.basename(path))[-1]["name"] == "later"
    store.close()


def test_every_entry_is_on_disk_when_append_returns(tmp_path):
    store = JsonlStore.create(str(tmp_path), str(tmp_path))
    store.append({"type": "message", "message": UserMessage(content="hi").to_json()})
    for index in range(5):
        stored = store.append({"type": "custom", "customType": "step", "data": {"i": index}})
        # read through a separate descriptor, as a crash right now would leave it
        assert read_jsonl(tmp_path / os.path.basename(store.session_file))[-1] == stored
    store.close()


def test_files_are_private(tmp_path):
    sessions = tmp_path / "agent" / "sessions" / "--x--"
    store = JsonlStore.create(str(tmp_path), str(sessions))
    store.append({"type": "message", "message": UserMessage(content="secret").to_json()})
    store.close()
    assert stat.S_IMODE(os.stat(store.session_file).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(sessions).st_mode) == 0o700


def test_reopen_restores_leaf_to_last_entry(tmp_path):
    path = write_jsonl(
        tmp_path / "s.jsonl",
        [header(), user("u1", None, "one"), assistant("a1", "u1", "two"), user("u2", "u1", "other branch")],
    )
    store = JsonlStore.open_file(str(path))
    assert store.leaf_id() == "u2"
    assert texts(store.build_context().messages) == ["one", "other branch"]
    assert store.cwd == "/home/dev/kite"
    store.close()


def test_truncated_last_entry_at_every_byte_offset(tmp_path):
    records = [
        header(),
        user("u1", None, "one"),
        assistant("a1", "u1", "two ünïcode"),
        user("u2", "a1", "three"),
    ]
    full = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records).encode()
    last_start = full.rstrip(b"\n").rfind(b"\n") + 1
    path = tmp_path / "s.jsonl"
    for cut in range(last_start, len(full) + 1):
        path.write_bytes(full[:cut])
        seen, warn = _warnings()
        store = JsonlStore.open_file(str(path), warn=warn)
        ids = [e["id"] for e in store.entries()]
        complete = cut >= len(full) - 1
        assert ids == (["u1", "a1", "u2"] if complete else ["u1", "a1"]), cut
        assert store.leaf_id() == ids[-1]
        # the file now ends with a newline, so the next append starts on a fresh line
        added = store.append({"type": "custom", "customType": "after"})
        store.close()
        reloaded = JsonlStore.open_file(str(path))
        assert [e["id"] for e in reloaded.entries()] == [*ids, added["id"]], cut
        assert reloaded.get(added["id"])["parentId"] == ids[-1]
        reloaded.close()
        if last_start < cut < len(full) - 1:
            assert any("malformed" in w for w in seen), cut


def test_malformed_middle_line_is_skipped_with_a_warning(tmp_path):
    path = tmp_path / "s.jsonl"
    lines = [
        json.dumps(header()),
        json.dumps(user("u1", None, "one")),
        '{"type":"message","id":"bro',
        "[1,2]",
        "",
        json.dumps(assistant("a1", "u1", "ok")),
    ]
    path.write_text("\n".join(lines) + "\n")
    seen, warn = _warnings()
    store = JsonlStore.open_file(str(path), warn=warn)
    assert [e["id"] for e in store.entries()] == ["u1", "a1"]
    assert seen and "line 3, 4" in seen[0]
    store.close()


def test_bad_header_is_refused_and_file_left_untouched(tmp_path):
    path = tmp_path / "notes.jsonl"
    content = b'{"type":"message","id":"x"}\n{"hello": 1}\n'
    path.write_bytes(content)
    os.utime(path, (1_000_000_000, 1_000_000_000))
    with pytest.raises(SessionOpenError, match="Not a pi session file") as info:
        JsonlStore.open_file(str(path))
    assert str(path) in str(info.value) and "\n" not in str(info.value)
    assert path.read_bytes() == content
    assert os.stat(path).st_mtime == 1_000_000_000
    # a text file without a newline at the end is not "repaired" either
    path.write_bytes(b"just text")
    with pytest.raises(SessionOpenError):
        JsonlStore.open_file(str(path))
    assert path.read_bytes() == b"just text"


def test_empty_file_gets_a_header_and_missing_path_is_created_lazily(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    store = JsonlStore.open_file(str(empty), cwd=str(tmp_path))
    assert read_jsonl(empty) == [store.header]
    store.close()
    missing = tmp_path / "sub" / "new.jsonl"
    store = JsonlStore.open_file(str(missing), cwd=str(tmp_path))
    assert store.session_file == str(missing) and not missing.exists()
    store.append({"type": "message", "message": UserMessage(content="hi").to_json()})
    assert read_jsonl(missing)[0]["cwd"] == str(tmp_path)
    store.close()


def test_v1_file_is_migrated_atomically_with_a_backup(tmp_path):
    v1 = [
        {
            "type": "session",
            "id": "old-session",
            "timestamp": "2025-01-01T00:00:00.000Z",
            "cwd": "/p",
            "provider": "x",
            "modelId": "y",
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "one", "timestamp": 1},
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:02.000Z",
            "message": {
                "role": "hookMessage",
                "customType": "h",
                "content": "hook",
                "display": True,
                "timestamp": 2,
            },
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:03.000Z",
            "message": {"role": "user", "content": "two", "timestamp": 3},
        },
        {
            "type": "compaction",
            "timestamp": "2025-01-01T00:00:04.000Z",
            "summary": "sum",
            "firstKeptEntryIndex": 3,
            "tokensBefore": 9,
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:05.000Z",
            "message": {"role": "user", "content": "three", "timestamp": 5},
        },
    ]
    path = write_jsonl(tmp_path / "old.jsonl", v1)
    original = path.read_bytes()
    seen, warn = _warnings()
    store = JsonlStore.open_file(str(path), warn=warn)
    store.close()
    assert (tmp_path / "old.jsonl.v1.bak").read_bytes() == original
    lines = read_jsonl(path)
    assert lines[0]["version"] == 3 and lines[0]["provider"] == "x"
    ids = [line["id"] for line in lines[1:]]
    assert [line["parentId"] for line in lines[1:]] == [None, *ids[:-1]]
    assert lines[4]["firstKeptEntryId"] == ids[2] and "firstKeptEntryIndex" not in lines[4]
    assert lines[2]["message"]["role"] == "custom"
    assert any("migrated" in w for w in seen)
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
    # idempotent: opening again changes nothing
    before = path.read_bytes()
    store = JsonlStore.open_file(str(path))
    assert roles(store.build_context().messages) == ["compactionSummary", "user", "user"]
    store.close()
    assert path.read_bytes() == before


def test_v2_hook_message_loads_as_custom(tmp_path):
    records = [
        {**header(), "version": 2},
        entry(
            "message",
            "h1",
            None,
            message={
                "role": "hookMessage",
                "customType": "h",
                "content": "x",
                "display": True,
                "timestamp": 1,
            },
        ),
    ]
    path = write_jsonl(tmp_path / "v2.jsonl", records)
    store = JsonlStore.open_file(str(path))
    assert roles(store.build_context().messages) == ["custom"]
    store.close()
    assert read_jsonl(path)[1]["message"]["role"] == "custom"
    assert (tmp_path / "v2.jsonl.v2.bak").exists()


def test_read_only_file_is_refused_clearly(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root ignores file permissions")
    path = write_jsonl(tmp_path / "s.jsonl", [header(), user("u1", None, "one")])
    os.chmod(path, 0o400)
    with pytest.raises(SessionOpenError, match="not writable"):
        JsonlStore.open_file(str(path))


def test_failed_write_keeps_memory_consistent(tmp_path):
    store = JsonlStore.create(str(tmp_path), str(tmp_path / "sessions"))
    store.append({"type": "message", "message": UserMessage(content="hi").to_json()})
    leaf = store.leaf_id()
    os.close(store._fd)  # the descriptor goes bad under us (disk gone, revoked...)
    with pytest.raises(SessionWriteError, match="Cannot write"):
        store.append({"type": "custom", "customType": "lost"})
    assert store.leaf_id() == leaf
    assert [e["type"] for e in store.entries()] == ["message"]
    store._fd = None


def test_unwritable_directory_fails_on_first_message_without_losing_memory(tmp_path):
    store = JsonlStore.create(str(tmp_path), "/proc/pi-host-no-such-dir")
    with pytest.raises(SessionWriteError):
        store.append({"type": "message", "message": UserMessage(content="hi").to_json()})
    assert store.entries() == []


def test_interrupted_tool_call_on_disk_is_closed_on_open_via_resolver(tmp_path):
    from pi_session_jsonl.resolve import open_store

    from pi_host.lib.sessions.store import StoreOptions

    path = write_jsonl(
        tmp_path / "s.jsonl",
        [
            header(cwd=str(tmp_path)),
            user("u1", None, "go"),
            assistant("a1", "u1", calls=[{"id": "t1", "name": "bash"}, {"id": "t2", "name": "bash"}]),
            tool_result("r1", "a1", "t1"),
        ],
    )
    store = open_store(StoreOptions(cwd=str(tmp_path), agent_dir=str(tmp_path / "agent"), session=str(path)))
    store.close()
    lines = read_jsonl(path)
    assert lines[-1]["message"]["toolCallId"] == "t2" and lines[-1]["message"]["isError"] is True
    assert lines[-1]["parentId"] == "r1"
    store = open_store(StoreOptions(cwd=str(tmp_path), agent_dir=str(tmp_path / "agent"), session=str(path)))
    store.close()
    assert len(read_jsonl(path)) == len(lines)  # nothing re-added, nothing re-run


def test_clone_and_fork_switch_to_new_files(tmp_path):
    records = [
        header(cwd=str(tmp_path)),
        user("u1", None, "one"),
        assistant("a1", "u1", "two"),
        user("u2", "a1", "three"),
    ]
    path = write_jsonl(tmp_path / "sessions" / "orig.jsonl", records)
    original = path.read_bytes()
    store = JsonlStore.open_file(str(path))
    old_id = store.session_id
    clone_path = store.clone()
    assert clone_path != str(path) and os.path.dirname(clone_path) == str(tmp_path / "sessions")
    lines = read_jsonl(tmp_path / "sessions" / os.path.basename(clone_path))
    assert lines[0]["parentSession"] == str(path) and lines[0]["id"] == store.session_id != old_id
    assert [line["id"] for line in lines[1:]] == ["u1", "a1", "u2"]
    again = JsonlStore.open_file(str(path))  # the original was released
    again.close()
    text = store.fork_before("u2")
    assert text == "three"
    fork_path = store.session_file
    assert read_jsonl(tmp_path / "sessions" / os.path.basename(fork_path))[1:] == records[1:3]
    store.append({"type": "message", "message": UserMessage(content="three, differently").to_json()})
    store.close()
    assert [line["id"] for line in read_jsonl(tmp_path / "sessions" / os.path.basename(fork_path))][1:3] == [
        "u1",
        "a1",
    ]
    assert path.read_bytes() == original


def test_fork_of_first_message_waits_for_a_conversation(tmp_path):
    records = [
        header(cwd=str(tmp_path)),
        entry("model_change", "m0", None, provider="faux", modelId="faux-1"),
        user("u1", "m0", "one"),
    ]
    path = write_jsonl(tmp_path / "s.jsonl", records)
    store = JsonlStore.open_file(str(path))
    assert store.fork_before("u1") == "one"
    assert not os.path.exists(store.session_file)  # only a model change so far: no file yet
    assert [e["id"] for e in store.entries()] == ["m0"]
    store.append({"type": "message", "message": UserMessage(content="uno").to_json()})
    assert [line["type"] for line in read_jsonl(Path(store.session_file))] == [
        "session",
        "model_change",
        "message",
    ]
    store.close()
