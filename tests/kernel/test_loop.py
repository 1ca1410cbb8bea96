"""The agent loop and session layer with the faux provider (reference §4, §11 items 20-29)."""

from __future__ import annotations

import asyncio
import json
import os

import pi_provider_faux as faux
import pytest

import pi_host
from pi_host import hookimpl
from pi_host.session import SessionError
from tests.support.sdk import EchoTool, FailTool, SequentialTool, SleepTool, new_session, record, shape


def call(name, args, id=None):
    return {"name": name, "arguments": args, **({"id": id} if id else {})}


async def test_event_sequence_of_a_multi_turn_tool_run():
    faux.set_responses(
        [
            {"toolCalls": [call("echo", {"text": "hi"})]},
            {"thinking": "now answer", "toolCalls": [call("echo", {"text": "again"})]},
            {"text": "done: {{lastToolResult}}"},
        ]
    )
    session = await new_session(EchoTool())
    events = record(session)
    assert await session.prompt("go") == "started"
    assert shape(events) == [
        "agent_start",
        "turn_start",
        "message_start(system)",
        "message_end(system)",
        "message_start(user)",
        "message_end(user)",
        "message_start(assistant)",
        "message_update*",
        "message_end(assistant)",
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_end",
        "message_start(toolResult)",
        "message_end(toolResult)",
        "turn_end",
        "turn_start",
        "message_start(assistant)",
        "message_update*",
        "message_end(assistant)",
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_end",
        "message_start(toolResult)",
        "message_end(toolResult)",
        "turn_end",
        "turn_start",
        "message_start(assistant)",
        "message_update*",
        "message_end(assistant)",
        "turn_end",
        "agent_end",
        "agent_settled",
    ]
    first_start = next(e for e in events if e["type"] == "message_start" and e["message"].role == "assistant")
    assert first_start["message"].stop_reason in (
        "pending",
        "toolUse",
    )  # pending when emitted (mutated later)
    assert session.last_assistant().text() == "done: again"
    ends = [e for e in events if e["type"] == "turn_end"]
    assert [len(e["toolResults"]) for e in ends] == [1, 1, 0]
    agent_end = next(e for e in events if e["type"] == "agent_end")
    assert [m.role for m in agent_end["messages"]] == [
        "system",
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "toolResult",
        "assistant",
    ]
    assert agent_end["willRetry"] is False
    assert events[-1] == {"type": "agent_settled", "aborted": False}
    # the system message declares the prompt sections and the tools, pi 1.6.0 style
    system = agent_end["messages"][0]
    assert [t.name for t in system.tools_added] == ["echo"] and "preamble" in system.sections


async def test_pending_stop_reason_is_visible_at_message_start():
    faux.set_responses([{"text": "hello world, this is long enough"}])
    session = await new_session()
    seen = []
    session.subscribe(
        lambda e: (
            seen.append(e["message"].stop_reason)
            if e["type"] == "message_start" and e["message"].role == "assistant"
            else None
        )
    )
    await session.prompt("hi")
    assert seen == ["pending"]
    stored = [
        e["message"]
        for e in session.store.entries()
        if e["type"] == "message" and e["message"]["role"] == "assistant"
    ]
    assert stored[0]["stopReason"] == "stop"


async def test_parallel_results_in_source_order_ends_in_completion_order():
    log = []
    faux.set_responses(
        [
            {
                "toolCalls": [
                    call("sleep", {"seconds": 0.15, "label": "slow"}, "c1"),
                    call("sleep", {"seconds": 0.01, "label": "fast"}, "c2"),
                ]
            },
            {"text": "ok"},
        ]
    )
    session = await new_session(SleepTool(log))
    events = record(session)
    await session.prompt("go")
    ends = [e["toolCallId"] for e in events if e["type"] == "tool_execution_end"]
    results = [
        e["message"].tool_call_id
        for e in events
        if e["type"] == "message_end" and e["message"].role == "toolResult"
    ]
    assert ends == ["c2", "c1"]
    assert results == ["c1", "c2"]
    assert log[:2] == ["start:slow", "start:fast"]  # ran concurrently
    turn_end = next(e for e in events if e["type"] == "turn_end")
    assert [r.tool_call_id for r in turn_end["toolResults"]] == ["c1", "c2"]


async def test_a_sequential_tool_forces_the_batch_to_run_one_at_a_time():
    log = []
    faux.set_responses(
        [
            {
                "toolCalls": [
                    call("sleep", {"seconds": 0.05, "label": "a"}),
                    call("serial", {"seconds": 0.0, "label": "b"}),
                ]
            },
            {"text": "ok"},
        ]
    )
    session = await new_session(SleepTool(log), SequentialTool(log))
    await session.prompt("go")
    assert log == ["start:a", "end:a", "start:b", "end:b"]


async def test_steering_arrives_after_the_whole_batch_one_at_a_time():
    log = []
    faux.set_responses(
        [
            {
                "toolCalls": [
                    call("sleep", {"seconds": 0.1, "label": "a"}),
                    call("sleep", {"seconds": 0.1, "label": "b"}),
                ]
            },
            {"text": "first"},
            {"text": "second"},
            {"text": "third"},
        ]
    )
    session = await new_session(SleepTool(log))
    events = record(session)
    await session.prompt("go", wait=False)
    await asyncio.sleep(0.05)
    assert await session.prompt("steer one", streaming_behavior="steer") == "queued"
    assert await session.steer("steer two") == "queued"
    await session.wait_for_idle()
    users = [e for e in events if e["type"] == "message_end" and e["message"].role == "user"]
    assert [u["message"].content[0].text for u in users] == ["go", "steer one", "steer two"]
    order = shape(events)
    # both tool results land before the first steering message
    first_steer = next(
        i
        for i, e in enumerate(events)
        if e["type"] == "message_end"
        and e["message"].role == "user"
        and e["message"].content[0].text == "steer one"
    )
    results = [
        i for i, e in enumerate(events) if e["type"] == "message_end" and e["message"].role == "toolResult"
    ]
    assert len(results) == 2 and max(results) < first_steer
    assert order.count("turn_start") == 3  # the tool turn, then one turn per steering message
    assert len(faux.requests) == 3
    queue_updates = [e for e in events if e["type"] == "queue_update"]
    assert queue_updates[-1] == {"type": "queue_update", "steering": [], "followUp": []}


async def test_steering_mode_all_delivers_the_queue_in_one_turn():
    faux.set_responses(
        [{"toolCalls": [call("sleep", {"seconds": 0.1, "label": "a"})]}, {"text": "x"}, {"text": "y"}]
    )
    session = await new_session(SleepTool(), settings={"steeringMode": "all"})
    events = record(session)
    await session.prompt("go", wait=False)
    await asyncio.sleep(0.03)
    await session.steer("s1")
    await session.steer("s2")
    await session.wait_for_idle()
    assert shape(events).count("turn_start") == 2
    assert len(faux.requests) == 2
    last_request_users = [m for m in faux.requests[1]["messages"] if m.role == "user"]
    assert [m.content[0].text for m in last_request_users] == ["go", "s1", "s2"]


async def test_follow_ups_wait_until_the_agent_would_stop():
    faux.set_responses(
        [
            {"toolCalls": [call("sleep", {"seconds": 0.1, "label": "a"})]},
            {"text": "answer one"},
            {"text": "answer two"},
        ]
    )
    session = await new_session(SleepTool())
    events = record(session)
    await session.prompt("go", wait=False)
    await asyncio.sleep(0.02)
    assert await session.follow_up("later please") == "queued"
    await session.wait_for_idle()
    messages = [e["message"] for e in events if e["type"] == "message_end"]
    roles = [m.role for m in messages]
    assert roles == ["system", "user", "assistant", "toolResult", "assistant", "user", "assistant"]
    assert messages[4].text() == "answer one" and messages[6].text() == "answer two"


async def test_prompt_while_streaming_needs_a_behaviour():
    faux.set_responses([{"text": "slow", "delayMs": 30}])
    session = await new_session()
    await session.prompt("go", wait=False)
    with pytest.raises(SessionError, match="streamingBehavior"):
        await session.prompt("again")
    await session.wait_for_idle()


async def test_validation_coerces_and_reports_each_bad_field():
    faux.set_responses(
        [
            {"toolCalls": [call("echo", {"text": "ab", "times": "3", "tags": "solo"})]},
            {"toolCalls": [call("echo", {"times": "many", "tags": [1, {"x": 1}]})]},
            {"text": "fine"},
        ]
    )
    session = await new_session(EchoTool())
    events = record(session)
    await session.prompt("go")
    results = [
        e["message"] for e in events if e["type"] == "message_end" and e["message"].role == "toolResult"
    ]
    assert results[0].is_error is False
    assert results[0].content[0].text == "ababab"
    assert results[0].details == {"args": {"text": "ab", "times": 3, "tags": ["solo"]}}
    text = results[1].content[0].text
    assert results[1].is_error is True
    assert "  - text: is required" in text
    assert "  - times: must be integer, got string" in text
    assert "  - tags.1: must be string, got object" in text
    assert text.endswith(json.dumps({"times": "many", "tags": [1, {"x": 1}]}, indent=2))
    # coercion copies: the transcript keeps what the model sent
    call_args = [
        e["message"] for e in events if e["type"] == "message_end" and e["message"].role == "assistant"
    ][0]
    assert call_args.tool_calls()[0].arguments["times"] == "3"


async def test_unknown_tools_bad_json_and_raising_tools_become_error_results():
    faux.set_responses(
        [
            {
                "toolCalls": [
                    call("nope", {}),
                    {"name": "echo", "rawArguments": '{"text": "unterminated'},
                    call("fail", {}),
                ]
            },
            {"text": "ok"},
        ]
    )
    session = await new_session(EchoTool(), FailTool())
    await session.prompt("go")
    results = [m for m in session.messages if m.role == "toolResult"]
    assert [r.is_error for r in results] == [True, True, True]
    assert "nope not found" in results[0].content[0].text
    assert "Invalid arguments" in results[1].content[0].text
    assert results[2].content[0].text == "it broke"


async def test_length_stop_runs_no_tools_and_records_an_error_per_call():
    faux.set_responses(
        [
            {"toolCalls": [call("echo", {"text": "a"}), call("echo", {"text": "b"})], "stopReason": "length"},
            {"text": "retrying later"},
        ]
    )
    session = await new_session(EchoTool())
    events = record(session)
    await session.prompt("go")
    results = [m for m in session.messages if m.role == "toolResult"]
    assert len(results) == 2 and all(r.is_error for r in results)
    assert "output token limit" in results[0].content[0].text
    assert [e["type"] for e in events].count("tool_execution_start") == 2
    # like pi, the loop goes on so the model can re-issue the calls; it sees both failures
    assert len(faux.requests) == 2
    assert [m.role for m in faux.requests[1]["messages"]][-2:] == ["toolResult", "toolResult"]


async def test_abort_mid_tool_leaves_every_call_answered():
    log = []
    faux.set_responses(
        [
            {
                "toolCalls": [
                    call("sleep", {"seconds": 5, "label": "long"}),
                    call("sleep", {"seconds": 5, "label": "other"}),
                ]
            }
        ]
    )
    session = await new_session(SleepTool(log))
    events = record(session)
    await session.prompt("go", wait=False)
    await asyncio.sleep(0.1)
    started = asyncio.get_running_loop().time()
    await session.abort()
    assert asyncio.get_running_loop().time() - started < 1
    results = [m for m in session.messages if m.role == "toolResult"]
    assert len(results) == 2 and all(r.is_error and r.content[0].text == "Operation aborted" for r in results)
    assert events[-1] == {"type": "agent_settled", "aborted": True}
    assert "agent_end" in [e["type"] for e in events]


async def test_abort_mid_stream_keeps_partial_text_as_aborted_message():
    faux.set_responses([{"text": "a" * 200, "delayMs": 20, "chunkSize": 4}])
    session = await new_session()
    events = record(session)
    await session.prompt("go", wait=False)
    await asyncio.sleep(0.15)
    await session.abort()
    final = session.last_assistant()
    assert final.stop_reason == "aborted"
    assert 0 < len(final.text()) < 200
    assert session.messages[-1] is final  # the partial was replaced, not duplicated
    assert [e["type"] for e in events][-3:] == ["turn_end", "agent_end", "agent_settled"]
    # the next prompt works and the aborted answer stays in the transcript
    faux.set_responses([{"text": "recovered"}])
    await session.prompt("again")
    assert session.last_assistant().text() == "recovered"


async def test_terminating_results_skip_the_follow_up_request():
    class TerminateAll:
        __name__ = "terminator"

        @hookimpl
        def on_tool_result(self, event):
            return {"terminate": True}

    faux.set_responses(
        [{"toolCalls": [call("echo", {"text": "x"}), call("echo", {"text": "y"})]}, {"text": "never"}]
    )
    session = await new_session(EchoTool(), plugins=[TerminateAll()])
    await session.prompt("go")
    assert len(faux.requests) == 1


async def test_tool_call_hook_blocks_and_tool_result_hook_patches():
    class Guard:
        __name__ = "guard"

        @hookimpl
        async def on_tool_call(self, event):
            if event["input"]["text"] == "rm -rf":
                return {"block": True, "reason": "dangerous"}
            event["input"]["text"] = event["input"]["text"].upper()

        @hookimpl
        def on_tool_result(self, event):
            return {"content": [{"type": "text", "text": event["content"][0].text + "!"}]}

    faux.set_responses(
        [{"toolCalls": [call("echo", {"text": "rm -rf"}), call("echo", {"text": "ok"})]}, {"text": "done"}]
    )
    session = await new_session(EchoTool(), plugins=[Guard()])
    await session.prompt("go")
    results = [m for m in session.messages if m.role == "toolResult"]
    assert results[0].is_error and results[0].content[0].text == "dangerous!"
    assert results[1].content[0].text == "OK!"


async def test_a_raising_tool_call_handler_blocks_the_call():
    class Broken:
        __name__ = "broken-guard"

        @hookimpl
        def on_tool_call(self, event):
            raise RuntimeError("guard crashed")

    faux.set_responses([{"toolCalls": [call("echo", {"text": "x"})]}, {"text": "done"}])
    session = await new_session(EchoTool(), plugins=[Broken()])
    await session.prompt("go")
    result = next(m for m in session.messages if m.role == "toolResult")
    assert result.is_error and "guard crashed" in result.content[0].text


async def test_input_handled_and_transform():
    class Input:
        __name__ = "input"

        @hookimpl
        def on_input(self, event):
            if event["text"] == "secret":
                return {"action": "handled"}
            return {"action": "transform", "text": event["text"] + " (transformed)"}

    faux.set_responses([{"text": "ok"}])
    session = await new_session(plugins=[Input()])
    assert await session.prompt("secret") == "handled"
    assert faux.requests == []
    await session.prompt("hello")
    user = [m for m in faux.requests[0]["messages"] if m.role == "user"][0]
    assert user.content[0].text == "hello (transformed)"


async def test_provider_errors_end_the_run_and_are_kept():
    faux.set_responses([{"text": "partial", "error": "400 invalid request"}])
    session = await new_session()
    events = record(session)
    await session.prompt("go")
    final = session.last_assistant()
    assert final.stop_reason == "error" and final.error_message == "400 invalid request"
    assert final.text() == "partial"
    assert [e["type"] for e in events][-3:] == ["turn_end", "agent_end", "agent_settled"]


async def test_messages_are_persisted_as_they_end():
    faux.set_responses([{"toolCalls": [call("echo", {"text": "x"})]}, {"text": "done"}])
    session = await new_session(EchoTool())
    await session.prompt("go")
    entries = session.store.entries()
    assert [e["type"] for e in entries[:2]] == ["model_change", "thinking_level_change"]
    roles = [e["message"]["role"] for e in entries if e["type"] == "message"]
    assert roles == ["system", "user", "assistant", "toolResult", "assistant"]
    parents = [e["parentId"] for e in entries]
    assert parents[0] is None and parents[1:] == [e["id"] for e in entries[:-1]]


async def test_changed_sections_and_tools_are_declared_as_a_patch():
    from pi_host.plugins.registrations import ContextSource

    state = {"note": "first"}

    class Source:
        __name__ = "source"

        @hookimpl
        def register_context_sources(self):
            return [
                ContextSource(
                    name="notes",
                    sections=lambda ctx: {"preamble": "base", "notes": f"<notes>\n{state['note']}\n</notes>"},
                )
            ]

    faux.set_responses([{"text": "a"}, {"text": "b"}, {"text": "c"}])
    session = await new_session(EchoTool(), SleepTool(), plugins=[Source()])
    await session.prompt("one")
    await session.prompt("two")  # nothing changed: no patch
    state["note"] = "second"
    session.active_tools.pop("sleep")
    await session.prompt("three")
    systems = [m for m in session.messages if m.role == "system"]
    assert len(systems) == 2
    assert systems[0].sections["notes"] == "<notes>\nfirst\n</notes>"
    assert systems[1].sections == {"notes": "<notes>\nsecond\n</notes>"}
    assert [t.name for t in systems[1].tools_removed] == ["sleep"] and systems[1].tools_added is None
    from pi_host.protocol.transcript import replay_system

    replayed = replay_system(faux.requests[-1]["messages"])
    assert "<notes>\nsecond\n</notes>" in replayed.render() and "first" not in replayed.render()
    assert list(replayed.tools) == ["echo"]


async def test_transient_errors_are_retried_with_backoff_and_hidden_from_the_model():
    faux.set_responses(
        [{"error": "503 service unavailable"}, {"error": "overloaded_error"}, {"text": "finally"}]
    )
    session = await new_session(settings={"retry": {"baseDelayMs": 10}})
    events = record(session)
    await session.prompt("go")
    assert session.last_assistant().text() == "finally"
    retries = [e for e in events if e["type"].startswith("auto_retry")]
    assert [(e["type"], e["attempt"]) for e in retries] == [
        ("auto_retry_start", 1),
        ("auto_retry_start", 2),
        ("auto_retry_end", 2),
    ]
    assert [e["delayMs"] for e in retries[:2]] == [10, 20] and retries[2]["success"] is True
    agent_ends = [e["willRetry"] for e in events if e["type"] == "agent_end"]
    assert agent_ends == [True, True, False]
    # the failed answers stay in the store but the model never sees them again
    edits = [e for e in session.store.entries() if e["type"] == "context_edit"]
    assert len(edits) == 2 and all(e["replacement"] is None for e in edits)
    assert [m.role for m in faux.requests[2]["messages"]] == ["system", "user"]
    assert [m.role for m in session.messages] == ["system", "user", "assistant"]


async def test_quota_errors_are_not_retried_and_exhaustion_is_reported():
    faux.set_responses([{"error": "insufficient_quota: billing"}])
    session = await new_session(settings={"retry": {"baseDelayMs": 1}})
    events = record(session)
    await session.prompt("go")
    assert not [e for e in events if e["type"].startswith("auto_retry")]
    faux.set_responses([{"error": "429 rate limit"}] * 3)
    session = await new_session(settings={"retry": {"baseDelayMs": 1, "maxRetries": 2}})
    events = record(session)
    await session.prompt("go")
    ends = [e for e in events if e["type"] == "auto_retry_end"]
    assert ends == [
        {"type": "auto_retry_end", "success": False, "attempt": 2, "finalError": "429 rate limit"}
    ]
    assert len(faux.requests) == 3


async def test_turn_end_boundary_can_add_a_message_and_ask_for_one_more_request():
    class Reviewer:
        __name__ = "reviewer"
        seen: list = []

        @hookimpl
        def on_turn_start(self, event):
            self.seen.append(event["turnIndex"])

        @hookimpl
        def on_turn_end(self, event):
            if event["turnIndex"] == 0:
                return {
                    "entries": [
                        {
                            "type": "custom_message",
                            "customType": "review",
                            "content": "Double-check that.",
                            "display": True,
                        }
                    ],
                    "continue": True,
                }

    faux.set_responses([{"text": "first answer"}, {"text": "checked"}])
    reviewer = Reviewer()
    session = await new_session(plugins=[reviewer])
    events = record(session)
    await session.prompt("go")
    assert len(faux.requests) == 2
    # pi announces an entry a boundary added with entry_appended {entry: the stored entry}
    [appended] = [e["entry"] for e in events if e["type"] == "entry_appended"]
    assert appended["type"] == "custom_message" and appended in session.store.entries()
    last_two = faux.requests[1]["messages"][-2:]
    assert [m.role for m in last_two] == ["assistant", "user"]  # custom messages reach the model as user
    assert last_two[1].content[0].text == "Double-check that."
    assert session.last_assistant().text() == "checked"
    assert reviewer.seen == [0, 1]
    assert any(e["type"] == "custom_message" and e["customType"] == "review" for e in session.store.entries())


async def test_default_tools_are_declared_in_pi_order():
    faux.set_responses([{"text": "ok"}])
    session = await pi_host.create_session(model="faux/faux-1", settings={})
    await session.prompt("hi")
    system = next(m for m in session.messages if m.role == "system")
    assert [t.name for t in system.tools_added] == ["read", "bash", "edit", "write"]
    assert session.tool_context.agent_dir == os.environ["PI_CODING_AGENT_DIR"]
