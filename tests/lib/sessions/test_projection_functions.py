"""The session tree's public projection functions (the ones compaction also uses, §6.5, §6.10)."""

from __future__ import annotations

from pi_host.lib.sessions import tree as st
from tests.support.session_files import assistant, entry, roles, user

SYSTEM = {"role": "system", "content": "", "sections": {"preamble": "base"}, "toolsAdded": [], "timestamp": 1}


def test_context_entries_keeps_tail_after_first_kept_without_system_messages():
    path = [
        entry("message", "s0", None, message=SYSTEM),
        user("u1", "s0", "one"),
        entry("message", "s1", "u1", message=SYSTEM),
        user("u2", "s1", "two"),
        entry("compaction", "c1", "u2", summary="S", firstKeptEntryId="u1", tokensBefore=5),
        user("u3", "c1", "three"),
    ]
    assert [e["id"] for e in st.context_entries(path)] == ["c1", "u1", "u2", "u3"]
    plain = path[:2]
    copy = st.context_entries(plain)
    assert copy == plain and copy is not plain


def test_project_entry_compaction_with_and_without_checkpoint():
    compaction = entry(
        "compaction", "c1", None, summary="S", firstKeptEntryId="c1", tokensBefore=5, systemMessage=SYSTEM
    )
    assert roles(st.project_entry(compaction)) == ["system", "compactionSummary"]
    assert roles(st.project_entry(compaction, checkpoint=False)) == ["compactionSummary"]


def test_project_entry_warns_and_skips_an_unreadable_entry():
    lines: list[str] = []
    broken = entry("message", "m1", None, message={"role": "user", "content": 12})
    assert st.project_entry(broken, lines.append) == []
    assert len(lines) == 1 and "m1" in lines[0]


def test_projected_entries_apply_latest_edit_and_keep_raw_messages():
    entries = [
        user("u1", None, "keep"),
        assistant("a1", "u1", "first answer"),
        entry("context_edit", "e1", "a1", targetId="a1", replacement={"content": "older edit"}),
        entry("context_edit", "e2", "e1", targetId="a1", replacement={"content": "shorter"}),
        entry("context_edit", "e3", "e2", targetId="u1", replacement=None),
    ]
    out = {e["id"]: (raw, messages) for e, raw, messages in st.projected_entries(entries)}
    assert roles(out["u1"][0]) == ["user"] and out["u1"][1] == []
    raw, messages = out["a1"]
    assert raw[0].content[0].text == "first answer"
    assert messages[0].content[0].text == "shorter" and messages[0].role == "assistant"


def test_later_compaction_projects_to_nothing_unless_every_compaction():
    entries = [
        entry("compaction", "c1", None, summary="one", firstKeptEntryId="c1", tokensBefore=1),
        entry("compaction", "c2", "c1", summary="two", firstKeptEntryId="c2", tokensBefore=1),
    ]
    assert [len(m) for _e, _r, m in st.projected_entries(entries)] == [1, 0]
    assert [len(m) for _e, _r, m in st.projected_entries(entries, every_compaction=True)] == [1, 1]


def test_walk_to_root_stops_at_a_cycle_and_missing_parents():
    by_id = {
        "a": entry("custom", "a", "b", customType="x"),
        "b": entry("custom", "b", "a", customType="x"),
        "c": entry("custom", "c", "gone", customType="x"),
    }
    assert [e["id"] for e in st.walk_to_root(by_id.get, "a")] == ["a", "b"]
    assert [e["id"] for e in st.walk_to_root(by_id.get, "c")] == ["c"]
    assert list(st.walk_to_root(by_id.get, None)) == []


def test_editor_text_and_navigation_target():
    blocks = [
        {"type": "text", "text": "hel"},
        {"type": "image", "data": "", "mimeType": "image/png"},
        {"type": "text", "text": "lo"},
    ]
    root = entry("message", "u1", None, message={"role": "user", "content": blocks, "timestamp": 1})
    answer = assistant("a1", "u1", "hi")
    custom = entry("custom_message", "m1", "a1", customType="note", content="remember")
    by_id = {e["id"]: e for e in (root, answer, custom)}
    assert st.editor_text(root) == "hello"
    assert st.editor_text(answer) is None and st.editor_text(None) is None
    assert st.navigation_target(root, by_id.get) == (None, "hello")
    assert st.navigation_target(custom, by_id.get) == ("a1", "remember")
    assert st.navigation_target(answer, by_id.get) == ("a1", None)


def test_fresh_id_avoids_taken_ids():
    taken = {st.fresh_id(set()) for _ in range(50)}
    new = st.fresh_id(taken)
    assert new not in taken and len(new) == 8
