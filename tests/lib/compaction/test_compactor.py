"""The compaction mechanism inside real sessions, with the scripted faux provider."""

from __future__ import annotations

import pi_provider_faux as faux
import pytest

from pi_host import hookimpl
from pi_host.lib.compaction import CompactionError
from pi_host.loop.convert import COMPACTION_PREFIX
from pi_host.plugins.dispatch import PluginRecord
from pi_host.runtime.compactor import RECOVERY_EXHAUSTED
from tests.support.compaction import Router, collect, dump_call, small_session, types

OVERFLOW = {"error": "400 prompt is too long: 9100 tokens > 8000 maximum"}


def compactions(session):
    return [e for e in session.store.entries() if e["type"] == "compaction"]


def request_text(context) -> str:
    return context.messages[-1].content[0].text


async def test_compaction_between_tool_turns_mid_loop():
    router = Router(
        [dump_call(6000), dump_call(6000), dump_call(6000), dump_call(6000), "all done"]
    ).install()
    session = await small_session()
    events = collect(session)
    await session.prompt("dump a lot")
    kinds = types(events)
    start = kinds.index("compaction_start")
    assert kinds[start - 1] == "turn_end" and kinds[start + 1] == "compaction_end"
    assert kinds[start + 2] == "turn_start"  # the run went on with the compacted context
    assert events[start]["reason"] == "threshold"
    end = events[start + 1]
    assert end["aborted"] is False and end["willRetry"] is False
    assert end["result"]["tokensBefore"] > 6000 > end["result"]["estimatedTokensAfter"]
    assert kinds[-2:] == ["agent_end", "agent_settled"]
    assert session.last_assistant().text() == "all done"
    [entry] = compactions(session)
    assert entry["firstKeptEntryId"] in {e["id"] for e in session.store.entries()}
    assert entry["systemMessage"]["role"] == "system" and entry["systemMessage"]["toolsAdded"]
    assert "fromHook" not in entry
    # the request after the compaction: replayed system message, the summary, the kept tail
    after = router.turn_requests[-1].messages
    assert after[0].role == "system"
    assert after[1].role == "user" and after[1].content[0].text.startswith(COMPACTION_PREFIX)
    assert "scripted summary" in after[1].content[0].text
    assert [m.role for m in session.messages][:2] == ["system", "compactionSummary"]
    # the split turn's prefix (the prompt) went to the summarizer; no earlier history existed
    [summary_request] = router.summary_requests
    assert "# Conversation" in request_text(summary_request) and "[User]: dump a lot" in request_text(
        summary_request
    )
    assert "(No earlier history" in entry["summary"]


async def test_summary_requests_have_no_tools_no_cache_and_a_fresh_session_id():
    Router([dump_call(6000)] * 4 + ["done"]).install()
    session = await small_session()
    await session.prompt("go")
    summary = [r for r in faux.requests if not r["tools"]]
    assert len(summary) == 1
    options = summary[0]["options"]
    assert options.cache_retention == "none" and options.session_id != session.session_id
    assert options.thinking_level is None  # faux-small does not reason


async def test_split_turn_merges_history_and_turn_prefix():
    router = Router(
        [dump_call(3000), "first answer", *[dump_call(6000)] * 4, "second answer"],
        summaries=["HISTORY PART", "PREFIX PART"],
    ).install()
    session = await small_session()
    await session.prompt("first task")
    await session.prompt("second task")
    [entry] = compactions(session)
    assert entry["summary"].startswith("HISTORY PART\n\n---\n\n**Turn context (split turn):**\n\nPREFIX PART")
    first, second = router.summary_requests
    assert "<conversation>" in request_text(first) and "[User]: first task" in request_text(first)
    assert "[User]: second task" in request_text(second)


async def test_overflow_compacts_once_and_retries():
    router = Router([dump_call(8000), "answer one", OVERFLOW, "recovered"]).install()
    settings = {"compaction": {"reserveTokens": 0, "keepRecentTokens": 500}}
    session = await small_session(settings=settings)
    await session.prompt("one")
    events = collect(session)
    await session.prompt("two")
    kinds = types(events)
    first_end = kinds.index("agent_end")
    assert events[first_end]["willRetry"] is True
    start = kinds.index("compaction_start")
    assert start > first_end and events[start]["reason"] == "overflow"
    end = events[kinds.index("compaction_end")]
    assert end["willRetry"] is True and end["aborted"] is False and end["result"]["summary"]
    assert kinds.count("agent_start") == 2 and kinds[-1] == "agent_settled"
    assert session.last_assistant().text() == "recovered"
    edits = [e for e in session.store.entries() if e["type"] == "context_edit"]
    failed = session.store.get(edits[0]["targetId"])
    assert failed["message"]["stopReason"] == "error" and edits[0]["replacement"] is None
    entries = session.store.entries()
    assert entries.index(edits[0]) < entries.index(compactions(session)[0])
    retried = router.turn_requests[-1].messages
    assert all(getattr(m, "stop_reason", None) != "error" for m in retried)
    assert retried[-1].role == "user" and retried[-1].content[0].text == "two"


async def test_second_overflow_for_the_same_prompt_reports_failure():
    Router([dump_call(8000), "answer one", OVERFLOW, OVERFLOW, "never"]).install()
    session = await small_session(settings={"compaction": {"reserveTokens": 0, "keepRecentTokens": 500}})
    await session.prompt("one")
    events = collect(session)
    await session.prompt("two")
    ends = [e for e in events if e["type"] == "compaction_end"]
    assert ends[-1] == {
        "type": "compaction_end",
        "reason": "overflow",
        "aborted": False,
        "willRetry": False,
        "errorMessage": RECOVERY_EXHAUSTED,
    }
    assert [e["willRetry"] for e in events if e["type"] == "agent_end"] == [True, False]
    assert len(compactions(session)) == 1
    assert session.last_assistant().stop_reason == "error"


async def test_recoverable_length_stop_is_compacted_and_retried():
    Router([dump_call(8000), "answer one", {"text": "cut sho", "stopReason": "length"}, "whole"]).install()
    session = await small_session(settings={"compaction": {"reserveTokens": 0, "keepRecentTokens": 500}})
    await session.prompt("one")
    await session.prompt("two")
    assert len(compactions(session)) == 1
    assert session.last_assistant().text() == "whole"


async def test_silent_overflow_compacts_and_keeps_the_answer():
    Router([dump_call(4000), "answer one", {"text": "fits?", "usage": {"input": 9000}}]).install()
    session = await small_session(settings={"compaction": {"reserveTokens": 0, "keepRecentTokens": 100}})
    await session.prompt("one")
    events = collect(session)
    await session.prompt("two")
    end = next(e for e in events if e["type"] == "compaction_end")
    assert end["reason"] == "overflow" and end["willRetry"] is False
    assert not [e for e in session.store.entries() if e["type"] == "context_edit"]
    assert session.messages[-1].role == "assistant" and session.messages[-1].text() == "fits?"


async def test_no_recovery_when_compaction_is_disabled():
    Router([dump_call(8000), "answer one", OVERFLOW]).install()
    session = await small_session(settings={"compaction": {"enabled": False}})
    events = collect(session)
    await session.prompt("one")
    await session.prompt("two")
    assert "compaction_start" not in types(events)
    assert [e["willRetry"] for e in events if e["type"] == "agent_end"] == [False, False]


async def test_overflow_from_another_model_is_not_recovered():
    Router([{**OVERFLOW}]).install()
    session = await small_session()
    original = session.model
    session.model = session.registry.find("faux", "faux-1")
    assert not session.compactor.will_retry(
        type(
            "A", (), {"role": "assistant", "stop_reason": "error", "provider": "faux", "model": original.id}
        )()
    )


class Cancel:
    __name__ = "cancel-compaction"

    def __init__(self):
        self.failed = []

    @hookimpl
    def on_session_before_compact(self, event):
        assert event["preparation"].messages_to_summarize or event["preparation"].turn_prefix_messages
        return {"cancel": True}

    @hookimpl
    def on_session_compact_failed(self, event):
        self.failed.append(event)


class Supply:
    def __init__(self, name, text):
        self.__name__ = name
        self.text = text

    @hookimpl
    def on_session_before_compact(self, event):
        prep = event["preparation"]
        return {
            "compaction": {
                "summary": self.text,
                "firstKeptEntryId": prep.first_kept_entry_id,
                "tokensBefore": 7,
            }
        }


class Raises:
    __name__ = "broken-compaction-hook"

    @hookimpl
    def on_session_before_compact(self, event):
        raise RuntimeError("hook exploded")


class Seen:
    __name__ = "seen"

    def __init__(self):
        self.compacted = []

    @hookimpl
    def on_session_compact(self, event):
        self.compacted.append(event)


async def _history(session):
    await session.prompt("first")
    await session.prompt("second")


def _history_router(**kw):
    return Router([dump_call(4000), "a1", dump_call(4000), "a2"], **kw).install()


async def test_plugin_cancel_stops_manual_compaction():
    router = _history_router()
    plugin = Cancel()
    session = await small_session([plugin])
    await _history(session)
    events = collect(session)
    with pytest.raises(CompactionError, match="^Compaction cancelled$"):
        await session.compact()
    assert not compactions(session) and not router.summary_requests
    assert events[-1]["type"] == "compaction_end" and events[-1]["aborted"] is True
    assert plugin.failed[0]["aborted"] is True and plugin.failed[0]["reason"] == "manual"


async def test_the_last_supplied_summary_wins():
    router = _history_router()
    seen = Seen()
    session = await small_session(
        [Supply("first-supplier", "from first"), Supply("second-supplier", "from second"), seen]
    )
    await _history(session)
    result = await session.compact()
    [entry] = compactions(session)
    assert entry["summary"] == result["summary"] == "from second"
    assert entry["fromHook"] is True and entry["tokensBefore"] == 7
    assert not router.summary_requests
    assert seen.compacted[0]["fromExtension"] is True and seen.compacted[0]["compactionEntry"] is entry


async def test_a_raising_plugin_is_named_and_the_default_strategy_still_runs():
    router = _history_router()
    session = await small_session([Raises()])
    errors = []
    session.host.on_error(errors.append)
    await _history(session)
    await session.compact()
    assert [(e["plugin"], e["event"]) for e in errors] == [
        ("broken-compaction-hook", "session_before_compact")
    ]
    assert "hook exploded" in errors[0]["error"]
    assert len(router.summary_requests) == 1 and "scripted summary" in compactions(session)[0]["summary"]


async def test_manual_compaction_result_focus_and_errors():
    router = _history_router()
    session = await small_session()
    with pytest.raises(CompactionError, match=r"^Nothing to compact \(session too small\)$"):
        await session.compact()
    await _history(session)
    events = collect(session)
    result = await session.compact("the parser")
    assert set(result) == {
        "summary",
        "firstKeptEntryId",
        "tokensBefore",
        "estimatedTokensAfter",
        "usage",
        "details",
    }
    assert "Additional focus: the parser" in request_text(router.summary_requests[0])
    assert [e["type"] for e in events] == ["compaction_start", "compaction_end"]
    assert events[0]["reason"] == "manual" and events[1]["result"] == result
    with pytest.raises(CompactionError, match="^Already compacted$"):
        await session.compact()


async def test_compact_with_focus_text():
    router = _history_router()
    session = await small_session()
    await _history(session)
    await session.compact("keep the test names")
    assert len(compactions(session)) == 1
    assert "Additional focus: keep the test names" in request_text(router.summary_requests[0])


async def test_summarization_retries_transient_errors_with_events():
    _history_router(summaries=[{"error": "503 service unavailable"}, "## Goal\nafter retry"])
    session = await small_session()
    await _history(session)
    events = collect(session)
    await session.compact()
    kinds = types(events)
    assert kinds == [
        "compaction_start",
        "summarization_retry_scheduled",
        "summarization_retry_attempt_start",
        "summarization_retry_finished",
        "compaction_end",
    ]
    assert events[1]["attempt"] == 1 and events[1]["delayMs"] == 1 and "503" in events[1]["errorMessage"]
    assert events[2] == {
        "type": "summarization_retry_attempt_start",
        "source": "compaction",
        "reason": "manual",
    }
    assert events[3]["success"] is True
    assert "## Goal\nafter retry" in compactions(session)[0]["summary"]


async def test_truncated_summary_is_never_stored():
    _history_router(summaries=[{"text": "## Goal\nhalf", "stopReason": "length"}])
    session = await small_session()
    await _history(session)
    events = collect(session)
    with pytest.raises(CompactionError, match="output token limit"):
        await session.compact()
    assert not compactions(session)
    assert "output token limit" in events[-1]["errorMessage"]


async def test_summary_uses_the_session_thinking_level_on_reasoning_models():
    _history_router()
    session = await small_session(
        model="faux/faux-reasoner", thinking_level="high", settings={"compaction": {"keepRecentTokens": 100}}
    )
    await _history(session)
    await session.compact()
    summary = [r for r in faux.requests if not r["tools"]]
    assert summary and summary[0]["options"].thinking_level == "high"


async def test_pre_prompt_threshold_check():
    Router(["a1", {"text": "big", "usage": {"input": 3000}}, "next"]).install()
    settings = {"compaction": {"reserveTokens": 0, "keepRecentTokens": 10}}
    session = await small_session(settings=settings)
    events = collect(session)
    await session.prompt("q" * 4000)
    await session.prompt("second " * 10)  # 3000 reported: under 8000
    assert "compaction_start" not in types(events)
    settings["compaction"]["reserveTokens"] = 5000  # threshold drops to 3000
    await session.prompt("third")
    kinds = types(events)
    last_run = kinds.index("agent_start", kinds.index("agent_settled", kinds.index("agent_settled") + 1))
    assert kinds.index("compaction_start") < last_run
    assert events[kinds.index("compaction_start")]["reason"] == "threshold"
    [entry] = compactions(session)
    assert session.store.get(entry["firstKeptEntryId"])["message"]["content"][0]["text"].startswith("second")


async def test_post_run_threshold_check():
    Router(["a1", {"text": "big", "usage": {"input": 7000}}]).install()
    session = await small_session(settings={"compaction": {"reserveTokens": 2000, "keepRecentTokens": 10}})
    await session.prompt("q" * 4000)
    events = collect(session)
    await session.prompt("second " * 10)
    kinds = types(events)
    assert kinds.index("agent_end") < kinds.index("compaction_start") < kinds.index("agent_settled")
    assert events[kinds.index("compaction_start")]["reason"] == "threshold"
    assert events[kinds.index("compaction_end")]["result"]["tokensBefore"] > 7000
    assert len(compactions(session)) == 1
    # right after a compaction the context size is unknown until a response reports usage
    assert session.compactor.context_usage()["tokens"] is None


async def test_unknown_strategy_name_fails_with_the_installed_names():
    _history_router()
    session = await small_session(settings={"compaction": {"strategy": "nope", "keepRecentTokens": 100}})
    await _history(session)
    with pytest.raises(CompactionError, match=r"No compaction strategy named 'nope' \(installed: .*llm"):
        await session.compact()


async def test_no_recovery_promised_when_the_session_is_too_small_to_compact():
    Router([{"text": "cut sh", "stopReason": "length"}]).install()
    session = await small_session()
    events = collect(session)
    await session.prompt("hi")
    assert "compaction_start" not in types(events)
    assert [e["willRetry"] for e in events if e["type"] == "agent_end"] == [False]
    assert session.last_assistant().stop_reason == "length"  # still the result of the prompt
    assert not [e for e in session.store.entries() if e["type"] == "context_edit"]


async def test_abort_during_mid_run_compaction_cancels_it_and_ends_the_run():
    import asyncio

    Router([dump_call(6000)] * 4 + ["never"], summaries=[{"text": "slow summary", "delayMs": 200}]).install()
    session = await small_session()
    events = collect(session)
    seen = asyncio.Event()
    session.subscribe(lambda e: seen.set() if e["type"] == "compaction_start" else None)
    await session.prompt("go", wait=False)
    await asyncio.wait_for(seen.wait(), 5)
    await session.abort()
    end = next(e for e in events if e["type"] == "compaction_end")
    assert end["aborted"] is True and end["errorMessage"] == "Compaction cancelled"
    assert not compactions(session)
    assert events[-1] == {"type": "agent_settled", "aborted": True}
    assert not session.compactor.is_busy


async def test_failed_overflow_recovery_keeps_the_omission_and_the_visible_error():
    Router(
        [dump_call(8000), "answer one", OVERFLOW], summaries=[{"text": "half", "stopReason": "length"}]
    ).install()
    session = await small_session(settings={"compaction": {"reserveTokens": 0, "keepRecentTokens": 500}})
    await session.prompt("one")
    events = collect(session)
    await session.prompt("two")
    end = next(e for e in events if e["type"] == "compaction_end")
    assert end["errorMessage"].startswith("Context overflow recovery failed: ")
    assert "output token limit" in end["errorMessage"]
    assert types(events).count("agent_start") == 1 and not compactions(session)
    assert [e["type"] for e in session.store.entries()][-1] == "context_edit"
    assert session.last_assistant().stop_reason == "error"


async def test_supplied_compaction_with_a_foreign_first_kept_id_falls_back_to_the_cut():
    _history_router()

    class Foreign:
        __name__ = "foreign-cut"

        @hookimpl
        def on_session_before_compact(self, event):
            return {"compaction": {"summary": "mine", "firstKeptEntryId": "not-here"}}

    session = await small_session([Foreign()])
    errors = []
    session.host.on_error(errors.append)
    await _history(session)
    prepared_cut = None

    class Peek:
        __name__ = "peek"

        @hookimpl
        def on_session_before_compact(self, event):
            nonlocal prepared_cut
            prepared_cut = event["preparation"].first_kept_entry_id

    session.host.register(Peek(), PluginRecord(name="peek", source="sdk"))
    result = await session.compact()
    assert result["firstKeptEntryId"] == prepared_cut and "not-here" in errors[0]["error"]


async def test_second_compaction_updates_the_previous_summary():
    count = iter(range(1, 100))
    router = Router(
        [dump_call(4000), "a1", dump_call(4000), "a2", dump_call(4000), "a3", dump_call(4000), "a4"],
        summaries=[lambda context: {"text": f"## Goal\nNOTES {next(count)}"}],
    ).install()
    session = await small_session(settings={"compaction": {"reserveTokens": 0, "keepRecentTokens": 100}})
    await session.prompt("one")
    await session.prompt("two")
    await session.compact()
    first_requests = len(router.summary_requests)
    await session.prompt("three")
    await session.prompt("four")
    await session.compact()
    first, second = (e["summary"] for e in compactions(session))
    history = [
        request_text(r)
        for r in router.summary_requests[first_requests:]
        if "<conversation>" in request_text(r)
    ]
    assert len(history) == 1
    assert f"<previous-summary>\n{first}\n</previous-summary>" in history[0]
    assert "Rewrite the notes" in history[0]  # the update variant of the instructions
    assert "[User]: three" in history[0]
    assert session.messages[1].role == "compactionSummary" and session.messages[1].summary == second
