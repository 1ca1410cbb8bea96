"""``TreeStore.custom_entries``: what a plugin restores its state from at session start, read
without decoding a message (a long resumed session keeps most of its messages as stubs; decoding
them all at start-up would cost the whole file)."""

from __future__ import annotations

import json

from pi_session_jsonl.store import JsonlStore

from pi_host.lib.sessions.store import MemoryStore
from tests.support.session_files import entry, header, user


def _stubbed(store: JsonlStore) -> list[str]:
    """Ids of the entries still undecoded (a stub's message holds only its role)."""
    return [
        e["id"] for e in store.tree._entries if e["type"] == "message" and e["message"].keys() == {"role"}
    ]


def test_custom_entries_of_the_branch_leave_the_messages_undecoded(tmp_path):
    long = "z" * 1000
    records = [
        header(cwd=str(tmp_path)),
        user("u1", None, long),
        entry("custom", "c1", "u1", customType="perm", data={"allow": "bash(ls)"}),
        user("u2", "c1", long),
        entry("custom", "c2", "u2", customType="other", data=1),
        entry("custom", "c3", "c2", customType="perm", data={"allow": "edit"}),
        entry("compaction", "k1", "c3", summary="s", firstKeptEntryId="k1", tokensBefore=1),
        entry("custom", "c4", "u1", customType="perm", data="another branch"),
        entry("custom", "c5", "k1", customType="perm", data="leaf"),
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    store = JsonlStore.open_file(str(path))
    try:
        store.build_context()
        assert _stubbed(store) == ["u1", "u2"]  # before the compaction: not in the context
        assert store.custom_entries("perm") == [{"allow": "bash(ls)"}, {"allow": "edit"}, "leaf"]
        assert store.custom_entries("perm", branch=False) == [
            {"allow": "bash(ls)"},
            {"allow": "edit"},
            "another branch",
            "leaf",
        ]
        assert _stubbed(store) == ["u1", "u2"]
        assert [e["id"] for e in store.tree.of_type("message")] == ["u1", "u2"]  # handed out whole
        assert _stubbed(store) == []
    finally:
        store.close()


def test_a_memory_store_has_them_too(tmp_path):
    store = MemoryStore(str(tmp_path))
    store.append({"type": "custom", "customType": "perm", "data": 5})
    assert store.custom_entries("perm") == [5] and store.custom_entries("none") == []
