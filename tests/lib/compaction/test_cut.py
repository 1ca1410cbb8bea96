"""Cut points on constructed session trees (reference §7.3)."""

from __future__ import annotations

from pi_host.lib.compaction import (
    ALREADY_COMPACTED,
    NOTHING_TO_COMPACT,
    CompactionSettings,
    prepare_compaction,
)
from tests.support.entries import Chain

KEEP_400 = CompactionSettings(keep_recent_tokens=400)


def roles(messages):
    return [m.role for m in messages]


def test_small_session_has_nothing_to_compact():
    chain = Chain()
    chain.add("model_change", provider="faux", modelId="faux-small")
    chain.system()
    chain.turn("hello", "x" * 40)
    assert prepare_compaction(chain.entries, CompactionSettings(), 0) == NOTHING_TO_COMPACT


def test_empty_path_and_metadata_only_path_have_nothing_to_compact():
    assert prepare_compaction([], CompactionSettings(), 0) == NOTHING_TO_COMPACT
    chain = Chain()
    chain.add("model_change", provider="faux", modelId="faux-small")
    chain.add("thinking_level_change", thinkingLevel="off")
    assert prepare_compaction(chain.entries, KEEP_400, 0) == NOTHING_TO_COMPACT


def test_directly_after_a_compaction_it_is_already_compacted():
    chain = Chain()
    chain.turn("one", "x" * 4000)
    chain.add("compaction", summary="s", firstKeptEntryId="e1", tokensBefore=10)
    assert prepare_compaction(chain.entries, KEEP_400, 0) == ALREADY_COMPACTED


def test_whole_turns_cut_at_a_user_message_without_split():
    chain = Chain()
    chain.system()
    chain.turn("first", "a" * 4000)
    chain.turn("second", "b" * 4000)
    second_user = next(
        e
        for e in chain.entries
        if e["type"] == "message" and e["message"]["role"] == "user" and "second" in str(e)
    )
    third = chain.user("third " + "c" * 1600)  # the 400-token budget is reached here
    chain.assistant("ok")
    prepared = prepare_compaction(chain.entries, KEEP_400, 123)
    assert not isinstance(prepared, str)
    assert not prepared.is_split_turn and prepared.turn_prefix_messages == []
    assert prepared.first_kept_entry_id == third["id"]
    assert prepared.tokens_before == 123
    kept_ids = [e["id"] for e in prepared.kept_entries]
    assert prepared.first_kept_entry_id == kept_ids[0]
    assert second_user["id"] not in kept_ids
    assert roles(prepared.messages_to_summarize)[0] == "user"
    assert "system" not in roles(prepared.messages_to_summarize)


def test_cut_never_lands_on_a_tool_result():
    chain = Chain()
    chain.system()
    chain.turn("first", "a" * 4000)
    chain.user("second")
    chain.assistant(calls=[{"name": "dump"}])
    big = chain.result("b" * 4000)  # budget of 400 tokens is reached here
    after = chain.assistant(calls=[{"name": "dump"}])
    chain.result("c" * 100)
    chain.assistant("done")
    prepared = prepare_compaction(chain.entries, KEEP_400, 0)
    assert prepared.first_kept_entry_id == after["id"]
    assert prepared.first_kept_entry_id != big["id"]
    kept_roles = [e["message"]["role"] for e in prepared.kept_entries]
    assert kept_roles[0] == "assistant" and kept_roles.count("toolResult") == 1


def test_split_turn_yields_history_and_turn_prefix():
    chain = Chain()
    chain.system()
    chain.turn("earlier work", "a" * 400)
    turn_user = chain.user("long task")
    for i in range(4):
        chain.assistant(calls=[{"name": "dump"}])
        chain.result(f"{i}" * 1200)
    prepared = prepare_compaction(chain.entries, KEEP_400, 0)
    assert prepared.is_split_turn
    assert roles(prepared.messages_to_summarize) == ["user", "assistant", "toolResult", "assistant"]
    assert prepared.turn_prefix_messages[0].content[0].text == "long task"
    assert prepared.kept_entries[0]["message"]["role"] == "assistant"
    assert turn_user in prepared.entries_to_summarize


def test_cut_moves_back_over_metadata_entries():
    chain = Chain()
    chain.system()
    chain.turn("first", "a" * 4000)
    label = chain.add("label", targetId="e2", label="start")
    change = chain.add("model_change", provider="faux", modelId="faux-1")
    chain.user("second " + "b" * 2000)
    chain.assistant("ok")
    prepared = prepare_compaction(chain.entries, KEEP_400, 0)
    assert not prepared.is_split_turn
    assert prepared.first_kept_entry_id == label["id"]
    assert [e["id"] for e in prepared.kept_entries][:2] == [label["id"], change["id"]]


def test_iterative_compaction_starts_at_the_previous_retained_tail():
    chain = Chain()
    chain.system()
    chain.turn("first", "a" * 4000)
    kept_user = chain.user("second")
    chain.assistant("reply to second", calls=[{"name": "read", "arguments": {"path": "b.py"}}])
    chain.result("b" * 100)
    chain.assistant("done second")
    chain.add(
        "compaction",
        summary="previous summary",
        firstKeptEntryId=kept_user["id"],
        tokensBefore=1000,
        details={"readFiles": ["a.py"], "modifiedFiles": ["m.py"]},
    )
    chain.turn("third", "c" * 4000)
    chain.turn("fourth", "d" * 800)
    prepared = prepare_compaction(chain.entries, KEEP_400, 0)
    assert prepared.previous_summary == "previous summary"
    texts = [m.content[0].text for m in prepared.messages_to_summarize if m.role == "user"]
    assert texts == ["second"]  # the previous retained tail is summarized now
    assert prepared.is_split_turn and prepared.turn_prefix_messages[0].content[0].text == "third"
    read, modified = prepared.file_ops.lists()
    assert read == ["a.py", "b.py"] and modified == ["m.py"]


def test_previous_summary_from_a_plugin_is_not_merged_into_file_lists():
    chain = Chain()
    chain.turn("first", "a" * 4000)
    chain.add(
        "compaction",
        summary="hook",
        firstKeptEntryId="e1",
        tokensBefore=1,
        fromHook=True,
        details={"readFiles": ["x.py"]},
    )
    chain.turn("second", "b" * 4000)
    chain.turn("third", "c" * 2000)
    prepared = prepare_compaction(chain.entries, KEEP_400, 0)
    assert "x.py" not in prepared.file_ops.read


def test_omitted_attempts_are_not_cut_points_and_not_kept():
    chain = Chain()
    chain.system()
    chain.turn("first", "a" * 4000)
    user = chain.user("second " + "q" * 2000)
    failed = chain.assistant(stop="error")
    chain.add("context_edit", targetId=failed["id"], replacement=None)
    prepared = prepare_compaction(chain.entries, KEEP_400, 0)
    assert prepared.first_kept_entry_id == user["id"]
    assert all(m.role != "assistant" or m.stop_reason != "error" for m in prepared.messages_to_summarize)


def test_retain_none_when_only_invisible_entries_follow_the_cut():
    chain = Chain()
    chain.system()
    chain.turn("first", "a" * 4000)
    chain.user("q" * 3000)
    failed = chain.assistant("partial " * 10, stop="length")
    chain.add("context_edit", targetId=failed["id"], replacement=None)
    chain.add("label", targetId=failed["id"], label="x")
    prepared = prepare_compaction(chain.entries, CompactionSettings(keep_recent_tokens=0), 0)
    assert prepared.first_kept_entry_id is None  # the compaction entry will name itself
    assert prepared.kept_entries == []


def test_context_edit_replacement_is_what_gets_summarized():
    chain = Chain()
    chain.system()
    first = chain.user("secret " * 500)
    chain.add("context_edit", targetId=first["id"], replacement={"content": "redacted"})
    chain.assistant("ok")
    chain.turn("second", "b" * 4000)
    chain.turn("third", "c" * 2000)
    prepared = prepare_compaction(chain.entries, KEEP_400, 0)
    assert prepared.messages_to_summarize[0].content == "redacted"


def test_file_operations_are_collected_from_tool_calls():
    chain = Chain()
    chain.user("edit things")
    chain.assistant(
        calls=[
            {"name": "read", "arguments": {"path": "src/a.py"}},
            {"name": "read", "arguments": {"path": "src/b.py"}},
        ]
    )
    chain.result("x" * 2000)
    chain.assistant(
        calls=[
            {"name": "edit", "arguments": {"path": "src/b.py"}},
            {"name": "write", "arguments": {"path": "new.txt"}},
        ]
    )
    chain.result("y" * 2000)
    chain.assistant("done")
    chain.turn("next", "z" * 2000)
    prepared = prepare_compaction(chain.entries, KEEP_400, 0)
    assert prepared.file_ops.details() == {
        "readFiles": ["src/a.py"],
        "modifiedFiles": ["new.txt", "src/b.py"],
    }
    assert prepared.file_ops.format() == (
        "\n\n<read-files>\nsrc/a.py\n</read-files>\n\n<modified-files>\nnew.txt\nsrc/b.py\n</modified-files>"
    )
