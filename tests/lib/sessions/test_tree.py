"""Tree, leaf and context projection (reference §6.4, §6.5, §6.10, §11 items 44, 46, 47, 49)."""

from __future__ import annotations

import pytest

from pi_host.lib.sessions.store import MemoryStore
from pi_host.lib.sessions.tree import SessionTree
from pi_host.protocol import AssistantMessage, UserMessage
from tests.support.session_files import assistant, entry, roles, texts, tool_result, user

SYSTEM = {"role": "system", "content": "", "sections": {"preamble": "base"}, "toolsAdded": [], "timestamp": 1}


def example_entries() -> list[dict]:
    """Reference §6.11: a question, a tool call, an answer, a name, a label, then a re-ask."""
    return [
        entry("model_change", "3f9a1c07", None, provider="local-vllm", modelId="qwen3-coder"),
        entry("thinking_level_change", "b2e4d611", "3f9a1c07", thinkingLevel="medium"),
        entry("message", "0c7d5e92", "b2e4d611", message=SYSTEM),
        user("8a41f3bd", "0c7d5e92", "How many TODOs are in src/?"),
        assistant("e5090c2a", "8a41f3bd", calls=[{"id": "call_7Hq2", "name": "bash"}]),
        tool_result("71c6ad30", "e5090c2a", "call_7Hq2", "4\n"),
        assistant("d04b9e18", "71c6ad30", "src/ contains 4 TODO markers."),
        entry("session_info", "4e2f8a6c", "d04b9e18", name="TODO count"),
        entry("label", "9bd1e377", "4e2f8a6c", targetId="8a41f3bd", label="question"),
        user("c3a8f520", "0c7d5e92", "How many TODOs are in src/ and tests/?", ts="2026-12-02T09:15:02.344Z"),
    ]


def test_leaf_is_last_entry_and_context_follows_its_path():
    store = MemoryStore("/home/dev/kite", entries=example_entries())
    assert store.leaf_id() == "c3a8f520"
    context = store.build_context()
    assert roles(context.messages) == ["system", "user"]
    assert texts(context.messages)[1] == "How many TODOs are in src/ and tests/?"
    assert context.thinking_level == "medium"
    assert context.model == {"provider": "local-vllm", "modelId": "qwen3-coder"}
    assert store.name == "TODO count"
    assert store.label("8a41f3bd") == "question"


def test_branch_moves_leaf_and_next_append_starts_a_new_branch():
    store = MemoryStore("/home/dev/kite", entries=example_entries())
    store.branch("d04b9e18")
    context = store.build_context()
    assert roles(context.messages) == ["system", "user", "assistant", "toolResult", "assistant"]
    # the model comes from the last assistant message on the path, after the model change
    assert context.model == {"provider": "faux", "modelId": "faux-1"}
    added = store.append({"type": "message", "message": UserMessage(content="again").to_json()})
    assert added["parentId"] == "d04b9e18"
    assert store.leaf_id() == added["id"]
    assert [c["id"] for c in store.children("d04b9e18")] == ["4e2f8a6c", added["id"]]
    with pytest.raises(KeyError):
        store.branch("nope")


def test_reset_leaf_makes_next_append_a_root_and_context_empty():
    store = MemoryStore("/x", entries=example_entries())
    store.reset_leaf()
    assert store.build_context().messages == []
    root = store.append({"type": "custom", "customType": "x"})
    assert root["parentId"] is None


def test_tree_roots_children_order_and_labels():
    entries = example_entries()
    entries.append(
        entry("message", "orphan01", "missing!", message={"role": "user", "content": "o", "timestamp": 1})
    )
    entries.append(entry("custom", "selfpar1", "selfpar1", customType="x"))
    store = MemoryStore("/x", entries=entries)
    roots = store.get_tree()
    assert [r.entry["id"] for r in roots] == ["3f9a1c07", "orphan01", "selfpar1"]
    system = roots[0].children[0].children[0]
    assert system.entry["id"] == "0c7d5e92"
    # children sorted by timestamp: the first question (09:14:04) before the re-ask (09:15:02)
    assert [c.entry["id"] for c in system.children] == ["8a41f3bd", "c3a8f520"]
    assert system.children[0].label == "question"
    assert system.children[0].label_timestamp == "2026-12-02T09:14:03.590Z"


def test_labels_last_wins_empty_clears_and_never_reach_the_model():
    store = MemoryStore("/x", entries=example_entries())
    store.branch("d04b9e18")
    store.set_label("d04b9e18", "first")
    store.set_label("d04b9e18", "second")
    assert store.label("d04b9e18") == "second"
    store.set_label("d04b9e18", "")
    assert store.label("d04b9e18") is None
    assert "label" not in [m.role for m in store.build_context().messages]
    assert len(store.build_context().messages) == 5
    with pytest.raises(KeyError):
        store.set_label("nope", "x")


def compaction_entries(first_kept: str = "u2") -> list[dict]:
    return [
        entry("model_change", "m0", None, provider="faux", modelId="faux-1"),
        entry("message", "s0", "m0", message=SYSTEM),
        user("u1", "s0", "one"),
        assistant("a1", "u1", "answer one"),
        user("u2", "a1", "two"),
        entry(
            "message",
            "s1",
            "u2",
            message={
                "role": "system",
                "content": "",
                "sections": {"extra": "<extra>\nx\n</extra>"},
                "timestamp": 2,
            },
        ),
        assistant("a2", "s1", "answer two"),
        entry(
            "compaction",
            "c1",
            "a2",
            ts="2026-12-02T09:20:00.000Z",
            summary="S1",
            firstKeptEntryId=first_kept,
            tokensBefore=100,
            systemMessage={
                "role": "system",
                "content": "",
                "sections": {"preamble": "base", "extra": "<extra>\nx\n</extra>"},
                "timestamp": 5,
            },
        ),
        user("u3", "c1", "three"),
        assistant("a3", "u3", "answer three"),
    ]


def test_compaction_projection_checkpoint_summary_kept_then_after():
    store = MemoryStore("/x", entries=compaction_entries())
    messages = store.build_context().messages
    assert roles(messages) == ["system", "compactionSummary", "user", "assistant", "user", "assistant"]
    assert texts(messages)[2:] == ["two", "answer two", "three", "answer three"]  # kept system s1 dropped
    assert messages[1].summary == "S1" and messages[1].tokens_before == 100
    assert messages[1].timestamp == 1796203200000  # the entry's ISO time in ms (09:20:00Z)
    assert messages[0].sections["extra"] == "<extra>\nx\n</extra>"


def test_compaction_retain_none_and_latest_compaction_wins():
    entries = compaction_entries(first_kept="c1")
    entries.append(entry("compaction", "c2", "a3", summary="S2", firstKeptEntryId="u3", tokensBefore=50))
    entries.append(user("u4", "c2", "four"))
    store = MemoryStore("/x", entries=entries)
    messages = store.build_context().messages
    # c2 has no systemMessage: summary, then kept u3/a3, then u4; the older compaction c1 adds nothing
    assert roles(messages) == ["compactionSummary", "user", "assistant", "user"]
    assert messages[0].summary == "S2"
    store.branch("u3")
    assert roles(store.build_context().messages) == ["system", "compactionSummary", "user"]


def test_branch_summary_custom_message_and_context_edits():
    entries = [
        user("u1", None, "one"),
        assistant("a1", "u1", "answer one"),
        entry("branch_summary", "b1", "a1", fromId="zz", summary="went elsewhere"),
        entry("branch_summary", "b2", "b1", fromId="root", summary=""),
        entry(
            "custom_message",
            "cm",
            "b2",
            customType="note",
            content="remember",
            display=False,
            details={"k": 1},
        ),
        entry("custom", "cu", "cm", customType="state", data={"x": 1}),
        user("u2", "cu", "two"),
        entry(
            "context_edit",
            "e1",
            "u2",
            targetId="a1",
            replacement={"content": [{"type": "text", "text": "edited"}]},
        ),
        entry(
            "context_edit",
            "e2",
            "e1",
            targetId="a1",
            replacement={"content": [{"type": "text", "text": "edited again"}]},
        ),
        entry("context_edit", "e3", "e2", targetId="u1", replacement=None),
    ]
    store = MemoryStore("/x", entries=entries)
    messages = store.build_context().messages
    assert roles(messages) == ["assistant", "branchSummary", "custom", "user"]
    assert texts(messages)[0] == "edited again"
    assert isinstance(messages[0], AssistantMessage) and messages[0].provider == "faux"
    assert messages[1].summary == "went elsewhere" and messages[1].from_id == "zz"
    assert (
        messages[2].custom_type == "note" and messages[2].display is False and messages[2].details == {"k": 1}
    )
    # edits are branch-relative: off this branch the target is unedited
    store.branch("a1")
    assert texts(store.build_context().messages) == ["one", "answer one"]


def test_append_context_edit_validates_and_normalises():
    store = MemoryStore(
        "/x",
        entries=[
            user("u1", None, "one"),
            assistant("a1", "u1", "two"),
            entry("custom", "c", "a1", customType="t"),
        ],
    )
    edit = store.append_context_edit("a1", {"content": "short"})
    assert edit["replacement"] == {"content": [{"type": "text", "text": "short"}]}
    assert texts(store.build_context().messages) == ["one", "short"]
    with pytest.raises(ValueError):
        store.append_context_edit("c", None)
    with pytest.raises(KeyError):
        store.append_context_edit("zz", None)
    with pytest.raises(ValueError):
        store.append_context_edit("u1", {"bad": 1})
    store.branch("u1")
    with pytest.raises(ValueError, match="not on the active branch"):
        store.append_context_edit("a1", None)


def test_branch_with_summary_records_old_leaf():
    store = MemoryStore("/x", entries=example_entries())
    summary = store.branch_with_summary(
        "0c7d5e92", "tried TODO counting", details={"readFiles": [], "modifiedFiles": []}
    )
    assert summary["parentId"] == "0c7d5e92" and summary["fromId"] == "c3a8f520"
    assert roles(store.build_context().messages) == ["system", "branchSummary"]
    store.reset_leaf()
    root = store.branch_with_summary(None, "from nothing")
    assert root["parentId"] is None and root["fromId"] == "root"


def test_navigate_user_message_goes_to_parent_and_returns_text():
    store = MemoryStore("/x", entries=example_entries())
    assert store.navigate("8a41f3bd") == "How many TODOs are in src/?"
    assert store.leaf_id() == "0c7d5e92"
    assert store.navigate("d04b9e18") is None
    assert store.leaf_id() == "d04b9e18"


def test_fork_before_and_clone_in_memory():
    store = MemoryStore("/x", entries=example_entries())
    old_id = store.session_id
    store.branch("9bd1e377")
    text = store.fork_before("8a41f3bd")
    assert text == "How many TODOs are in src/?"
    assert store.session_id != old_id
    assert [e["id"] for e in store.entries()] == ["3f9a1c07", "b2e4d611", "0c7d5e92"]
    store2 = MemoryStore("/x", entries=example_entries())
    store2.branch("9bd1e377")
    store2.clone()
    ids = [e["id"] for e in store2.entries()]
    # the label entry leaves the chain and comes back once at the end, re-parented
    assert ids[:8] == [
        "3f9a1c07",
        "b2e4d611",
        "0c7d5e92",
        "8a41f3bd",
        "e5090c2a",
        "71c6ad30",
        "d04b9e18",
        "4e2f8a6c",
    ]
    last = store2.entries()[-1]
    assert last["type"] == "label" and last["targetId"] == "8a41f3bd" and last["parentId"] == "4e2f8a6c"
    assert store2.label("8a41f3bd") == "question"
    with pytest.raises(ValueError):
        store2.fork_before("e5090c2a")


def test_clone_remaps_first_kept_pointing_at_a_label():
    entries = [
        user("u1", None, "one"),
        entry("label", "l1", "u1", targetId="u1", label="L"),
        assistant("a1", "l1", "two"),
        entry("compaction", "c1", "a1", summary="S", firstKeptEntryId="l1", tokensBefore=1),
    ]
    store = MemoryStore("/x", entries=entries)
    store.clone()
    compaction = next(e for e in store.entries() if e["type"] == "compaction")
    assert compaction["firstKeptEntryId"] == "a1"
    assert next(e for e in store.entries() if e["id"] == "a1")["parentId"] == "u1"


def test_interrupted_tool_calls_get_error_results_once():
    entries = [
        user("u1", None, "go"),
        assistant(
            "a1",
            "u1",
            calls=[{"id": "t1", "name": "bash"}, {"id": "t2", "name": "read"}, {"id": "t3", "name": "ls"}],
        ),
        tool_result("r1", "a1", "t1"),
    ]
    store = MemoryStore("/x", entries=entries)
    added = store.close_interrupted_tool_calls()
    assert [a["message"]["toolCallId"] for a in added] == ["t2", "t3"]
    assert all(a["message"]["isError"] for a in added)
    assert "interrupted" in added[0]["message"]["content"][0]["text"]
    assert store.close_interrupted_tool_calls() == []
    # an aborted response never ran its calls: nothing to close
    aborted = MemoryStore(
        "/x",
        entries=[
            user("u1", None, "go"),
            assistant("a1", "u1", calls=[{"id": "t1", "name": "bash"}], stopReason="aborted"),
        ],
    )
    assert aborted.close_interrupted_tool_calls() == []


def test_compaction_append_records_system_checkpoint_and_retain_none():
    store = MemoryStore("/x", entries=[entry("message", "s0", None, message=SYSTEM), user("u1", "s0", "hi")])
    compaction = store.append({"type": "compaction", "summary": "S", "tokensBefore": 10})
    assert compaction["firstKeptEntryId"] == compaction["id"]
    assert compaction["systemMessage"]["sections"] == {"preamble": "base"}
    assert roles(store.build_context().messages) == ["system", "compactionSummary"]


def test_parent_cycle_does_not_hang():
    tree = SessionTree([entry("custom", "a", "b", customType="x"), entry("custom", "b", "a", customType="x")])
    assert len(tree.path()) <= 3


def test_context_is_cached_but_a_fresh_list():
    store = MemoryStore("/x", entries=example_entries())
    first = store.build_context().messages
    second = store.build_context().messages
    assert first is not second and first[1] is second[1]
    first.clear()
    assert len(store.build_context().messages) == 2


def test_entries_since_and_tree_json():
    store = MemoryStore("/x", entries=example_entries())
    assert [e["id"] for e in store.entries_since("4e2f8a6c")] == ["9bd1e377", "c3a8f520"]
    assert len(store.entries_since(None)) == 10
    with pytest.raises(KeyError, match="Entry not found: zz"):
        store.entries_since("zz")
    tree = [node.to_json() for node in store.get_tree()]
    question = tree[0]["children"][0]["children"][0]["children"][0]
    assert question["entry"]["id"] == "8a41f3bd" and question["label"] == "question"
    assert question["labelTimestamp"] == "2026-12-02T09:14:03.590Z"
    assert "label" not in tree[0]
