"""The tree navigator's state: rows, guides, filters, folds, search and the current marker."""

from __future__ import annotations

import pytest

pytest.importorskip("prompt_toolkit")

from pi_mode_interactive.tree_view import TreeRows, describe  # noqa: E402

from pi_host.lib.sessions.tree import SessionTree  # noqa: E402


def message(entry_id, parent, role, text, stamp):
    content = text if role == "user" else [{"type": "text", "text": text}]
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": f"2026-01-01T00:00:{stamp:02d}.000Z",
        "message": {"role": role, "content": content, "timestamp": 0},
    }


def session():
    """u1 → a1 → (u2 → a2 → name) | (u3 → a3); the leaf is a3."""
    entries = [
        message("u1", None, "user", "first question", 1),
        message("a1", "u1", "assistant", "first answer", 2),
        message("u2", "a1", "user", "second question", 3),
        message("a2", "u2", "assistant", "second answer", 4),
        {"type": "session_info", "id": "n1", "parentId": "a2", "timestamp": "2026-01-01T00:00:05.000Z", "name": "x"},
        message("u3", "a1", "user", "other question", 6),
        message("a3", "u3", "assistant", "other answer", 7),
        {"type": "label", "id": "l1", "parentId": "a3", "timestamp": "2026-01-01T00:00:08.000Z",
         "targetId": "u2", "label": "mark"},
    ]  # fmt: skip
    tree = SessionTree(entries)
    return tree.tree()


def shown(rows: TreeRows) -> list[str]:
    return [row.entry_id for row in rows.visible]


def test_rows_follow_the_tree_with_guides_at_the_branch_point_and_mark_the_active_path():
    rows = TreeRows(session(), "l1")
    assert shown(rows) == ["u1", "a1", "u2", "a2", "u3", "a3"]  # bookkeeping hidden by default
    prefixes = {row.entry_id: row.prefix for row in rows.visible}
    assert prefixes == {"u1": "", "a1": "", "u2": "├─ ", "a2": "│  ", "u3": "└─ ", "a3": "   "}
    assert [row.entry_id for row in rows.visible if row.on_path] == ["u1", "a1", "u3", "a3"]
    assert rows.current_id == "a3"  # the label entry (the leaf) is hidden: its nearest shown ancestor
    assert rows.selected_id == "a3"


def test_filters_search_and_labels():
    rows = TreeRows(session(), "a3")
    rows.set_filter("user-only")
    assert shown(rows) == ["u1", "u2", "u3"]
    rows.set_filter("user-only")  # choosing it again goes back to the default
    assert rows.filter_mode == "default"
    rows.set_filter("labeled-only")
    assert shown(rows) == ["u2"]
    rows.set_filter("all")
    assert shown(rows) == ["u1", "a1", "u2", "a2", "n1", "u3", "a3", "l1"]
    rows.set_filter("no-tools")
    rows.set_query("question other")
    assert shown(rows) == ["u3"]
    rows.set_query("")
    rows.set_label("a1", "here", "2026-01-01T00:01:00.000Z")
    rows.set_filter("labeled-only")
    assert shown(rows) == ["a1", "u2"]


def test_fold_hides_descendants_and_moves_between_branch_starts():
    rows = TreeRows(session(), "a3")
    rows.refresh(select="a1")
    rows.fold_or_up()
    assert shown(rows) == ["u1", "a1"]
    rows.unfold_or_down()
    assert shown(rows) == ["u1", "a1", "u2", "a2", "u3", "a3"]
    rows.refresh(select="a2")
    rows.fold_or_up()  # a2 has only bookkeeping below it: nothing to fold that shows, so it folds
    rows.fold_or_up()  # already folded: go to the start of its branch
    assert rows.selected_id == "u2"
    rows.unfold_or_down()  # next branch start
    assert rows.selected_id == "u3"


def test_descriptions_name_tools_and_summaries():
    call = {
        "type": "message",
        "message": {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c", "name": "bash", "arguments": {"command": "ls -la"}}],
        },
    }
    assert describe(call) == ("assistant", "assistant: → bash(ls -la)")
    result = {"type": "message", "message": {"role": "toolResult", "toolName": "bash", "isError": True,
                                             "content": [{"type": "text", "text": "boom\nmore"}]}}  # fmt: skip
    assert describe(result) == ("tool", "✗ bash: boom more")
    assert (
        describe({"type": "branch_summary", "summary": "went\nelsewhere"})[1]
        == "[branch summary] went elsewhere"
    )


def test_a_search_does_not_move_the_current_marker():
    rows = TreeRows(session(), "a3")
    rows.set_query("question")  # matches u1 and u3 on the path, not the leaf a3
    assert shown(rows) == ["u1", "u2", "u3"]
    assert rows.current_id == "a3"  # still the leaf, though the search hides it
    assert rows.current_id not in shown(rows)
    rows.set_query("")
    assert rows.current_id == "a3" and "a3" in shown(rows)


def test_a_long_branch_folds_in_one_pass():
    """A 20,000-entry session opens in the navigator and folds (checking each row's ancestors
    for a fold used to walk the whole branch per row: minutes for ``/tree`` on such a session)."""
    entries, parent = [], None
    for index in range(20_000):
        role = "user" if index % 2 == 0 else "assistant"
        entries.append(message(f"m{index}", parent, role, f"text {index}", index % 60))
        parent = f"m{index}"
    rows = TreeRows(SessionTree(entries).tree(), parent)
    assert len(rows.visible) == 20_000 and rows.current_id == "m19999"
    rows.refresh(select="m10000")
    rows.fold_or_up()
    assert shown(rows)[-1] == "m10000" and len(rows.visible) == 10_001
    assert rows.current_id == "m10000"  # the leaf is folded away: its nearest shown ancestor
    rows.unfold_or_down()
    assert len(rows.visible) == 20_000
