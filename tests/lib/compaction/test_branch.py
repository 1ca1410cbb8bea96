"""Branch summaries when the leaf moves to another branch (reference §6.10, §7.9)."""

from __future__ import annotations

import pytest

from pi_host import hookimpl
from pi_host.lib.compaction import EMPTY_BRANCH_SUMMARY, CompactionError
from pi_host.lib.compaction.branch import select_branch_messages
from pi_host.loop.convert import BRANCH_PREFIX
from pi_host.plugins.dispatch import PluginRecord
from tests.support.compaction import Router, collect, small_session
from tests.support.entries import Chain


def user_entry(session, text):
    return next(
        e
        for e in session.store.entries()
        if e["type"] == "message"
        and e["message"]["role"] == "user"
        and e["message"]["content"][0]["text"] == text
    )


async def explored(plugins=None, settings=None, summaries=None):
    router = Router(
        [
            "first answer",
            {"toolCalls": [{"name": "dump", "arguments": {"size": 50, "path": "src/x.py"}}]},
            "second answer",
        ],
        summaries=summaries or ["## Goal\nbranch notes"],
    ).install()
    # faux-small's 8000-token window minus the default 16384 reserve would leave no budget
    settings = {"branchSummary": {"reserveTokens": 1000}, **(settings or {})}
    session = await small_session(plugins, settings=settings)
    await session.prompt("first")
    await session.prompt("second")
    return session, router


async def test_going_back_to_a_user_message_summarizes_the_branch_left():
    session, router = await explored()
    old_leaf = session.store.leaf_id()
    target = user_entry(session, "second")
    result = await session.compactor.navigate_tree(target["id"], summarize=True)
    assert result["editorText"] == "second" and result["cancelled"] is False
    entry = result["summaryEntry"]
    assert entry["type"] == "branch_summary" and entry["fromId"] == old_leaf
    assert entry["parentId"] == target["parentId"] and session.store.leaf_id() == entry["id"]
    assert entry["summary"].startswith("The user explored another branch")
    assert "## Goal\nbranch notes" in entry["summary"]
    assert entry["details"] == {"readFiles": [], "modifiedFiles": []}  # dump is not read/write/edit
    [request] = router.summary_requests
    text = request.messages[-1].content[0].text
    # the chosen prompt goes back to the editor; what followed it is summarized
    assert "[Assistant]: second answer" in text and "[Assistant tool calls]: dump(" in text
    assert "[Tool result]" not in text and "[User]" not in text
    assert [m.role for m in session.messages][-1] == "branchSummary"
    assert [m.role for m in session.messages][-2] == "assistant"  # "first answer" stays
    # the next request sees the summary as a user message
    await session.prompt("again")
    sent = router.turn_requests[-1].messages
    assert sent[-2].content[0].text.startswith(BRANCH_PREFIX)


async def test_moving_to_a_non_user_entry_without_summary():
    session, router = await explored()
    answer = next(
        e for e in session.store.entries() if e["type"] == "message" and e["message"]["role"] == "assistant"
    )
    events = []

    class Watch:
        __name__ = "watch"

        @hookimpl
        def on_session_tree(self, event):
            events.append(event)

    session.host.register(Watch(), PluginRecord(name="watch", source="sdk"))
    result = await session.compactor.navigate_tree(answer["id"])
    assert session.store.leaf_id() == answer["id"] and "summaryEntry" not in result
    assert "editorText" not in result and not router.summary_requests
    assert events == [
        {"newLeafId": answer["id"], "oldLeafId": events[0]["oldLeafId"], "targetId": answer["id"]}
    ]
    assert [m.role for m in session.messages] == ["system", "user", "assistant"]


async def test_plugin_can_cancel_or_supply_the_summary_and_label():
    class Cancel:
        __name__ = "cancel-tree"

        @hookimpl
        def on_session_before_tree(self, event):
            assert event["preparation"].user_wants_summary
            return {"cancel": True}

    session, router = await explored([Cancel()])
    leaf = session.store.leaf_id()
    result = await session.compactor.navigate_tree(user_entry(session, "second")["id"], summarize=True)
    assert result["cancelled"] is True and session.store.leaf_id() == leaf

    class Supply:
        __name__ = "supply-tree"

        @hookimpl
        def on_session_before_tree(self, event):
            return {"summary": {"summary": "plugin notes"}, "label": "explored"}

    session, router = await explored([Supply()])
    result = await session.compactor.navigate_tree(user_entry(session, "second")["id"], summarize=True)
    entry = result["summaryEntry"]
    assert entry["summary"] == "plugin notes" and entry["fromHook"] is True
    assert not router.summary_requests
    label = session.store.entries()[-1]
    assert label["type"] == "label" and label["targetId"] == entry["id"] and label["label"] == "explored"


async def test_skip_prompt_setting_and_empty_branch():
    session, router = await explored(settings={"branchSummary": {"reserveTokens": 1000, "skipPrompt": True}})
    result = await session.compactor.navigate_tree(user_entry(session, "second")["id"], summarize=True)
    assert "summaryEntry" not in result and not router.summary_requests
    # back to where we are: an empty branch gets the placeholder without a model call
    session2, router2 = await explored()
    target = user_entry(session2, "first")
    await session2.compactor.navigate_tree(target["id"])  # leaf = first user's parent
    here = session2.store.leaf_id()
    assert here == target["parentId"]
    result = await session2.compactor.navigate_tree(target["id"], summarize=True)
    assert result["summaryEntry"]["summary"] == EMPTY_BRANCH_SUMMARY and not router2.summary_requests


async def test_unknown_target_and_failed_summary():
    session, router = await explored(summaries=[{"text": "x", "stopReason": "length"}])
    with pytest.raises(KeyError):
        await session.compactor.navigate_tree("nope")
    leaf = session.store.leaf_id()
    with pytest.raises(CompactionError, match="Branch summary failed"):
        await session.compactor.navigate_tree(user_entry(session, "second")["id"], summarize=True)
    assert session.store.leaf_id() == leaf


def test_budget_keeps_newest_messages_and_drops_tool_results():
    chain = Chain()
    chain.user("old " * 100)  # 100 tokens
    chain.assistant(calls=[{"name": "read", "arguments": {"path": "a"}}])
    chain.result("r" * 4000)
    chain.user("new " * 50)  # 50 tokens
    chain.assistant("answer")
    picked = select_branch_messages(chain.entries, chain.entries, 80)
    assert [m.role for m in picked] == ["assistant", "user", "assistant"]  # no tool result
    assert picked[1].content[0].text.startswith("new")
    every = select_branch_messages(chain.entries, chain.entries, 10_000)
    assert [m.role for m in every] == ["user", "assistant", "user", "assistant"]


def test_a_summary_that_overflows_still_fits_under_ninety_percent():
    chain = Chain()
    chain.add("branch_summary", fromId="x", summary="s" * 400)  # 100 tokens
    chain.user("n" * 40)  # 10 tokens
    picked = select_branch_messages(chain.entries, chain.entries, 50)
    assert [m.role for m in picked] == ["branchSummary", "user"]
    chain2 = Chain()
    chain2.user("o" * 400)
    chain2.user("n" * 40)
    assert [m.role for m in select_branch_messages(chain2.entries, chain2.entries, 50)] == ["user"]


async def test_branch_summary_events_are_not_compaction_events():
    session, router = await explored()
    events = collect(session)
    await session.compactor.navigate_tree(user_entry(session, "second")["id"], summarize=True)
    assert [e["type"] for e in events] == []


def test_compactions_on_the_branch_count_as_their_summaries():
    chain = Chain()
    chain.user("early")
    chain.add("compaction", summary="what happened early", firstKeptEntryId="e1", tokensBefore=5)
    chain.user("late")
    picked = select_branch_messages(chain.entries, chain.entries, 10_000)
    assert [m.role for m in picked] == ["user", "compactionSummary", "user"]
    assert picked[1].summary == "what happened early"


async def test_instructions_can_be_replaced_by_a_plugin():
    class Replace:
        __name__ = "replace-instructions"

        @hookimpl
        def on_session_before_tree(self, event):
            return {
                "customInstructions": "List only the commands that were run.",
                "replaceInstructions": True,
            }

    session, router = await explored([Replace()])
    await session.compactor.navigate_tree(
        user_entry(session, "second")["id"], summarize=True, custom_instructions="x"
    )
    text = router.summary_requests[0].messages[-1].content[0].text
    assert text.endswith("</conversation>\n\nList only the commands that were run.")
    assert "## Goal" not in text
