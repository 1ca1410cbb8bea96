"""The faux provider's stream on its own: it goes through the shared MessageBuilder and guard, so its
events look exactly like a real adapter's (partial tool arguments on every delta, strict parse at
the end, one terminal event, prompt abort)."""

from __future__ import annotations

import asyncio
import time

import pi_provider_faux as faux
from pi_provider_faux.stream import stream

from pi_host.protocol import LlmContext, Model, StreamOptions, UserMessage
from pi_host.protocol.abort import AbortController

MODEL = Model(id="faux-1", api="faux", provider="faux")


def run(options: StreamOptions | None = None):
    context = LlmContext(messages=[UserMessage(content="go")])
    return stream(MODEL, context, options or StreamOptions())


async def collect(options: StreamOptions | None = None) -> list:
    return [event async for event in run(options)]


async def test_thinking_text_and_tool_calls_with_partial_arguments():
    faux.set_responses(
        [
            {
                "thinking": "hmm, let me see",
                "text": "Reading two files.",
                "chunkSize": 4,
                "toolCalls": [
                    {"name": "read", "arguments": {"path": "src/ünï.py", "limit": 5}, "id": "c1"},
                    {"name": "bash", "rawArguments": '{"command": "ls\n"}'},  # raw newline: repaired
                ],
            }
        ]
    )
    events = await collect()
    kinds = [e.type for e in events]
    assert kinds[0] == "start" and kinds[-1] == "done"
    assert kinds.count("thinking_delta") == 4 and kinds.count("text_delta") == 5
    deltas = [e for e in events if e.type == "toolcall_delta"]
    assert len(deltas) > 2
    for event in deltas:
        arguments = event.partial.content[event.content_index].arguments
        assert isinstance(arguments, dict)
    first = [e for e in deltas if e.content_index == 2]
    assert first[-1].partial.content[2].arguments == {"path": "src/ünï.py", "limit": 5}
    message = events[-1].message
    assert message.stop_reason == "toolUse" and message.response_id == "faux_1"
    assert (
        message.content[0].thinking == "hmm, let me see" and message.content[0].thinking_signature == "faux"
    )
    assert message.text() == "Reading two files."
    calls = message.tool_calls()
    assert [c.id for c in calls] == ["c1", "faux_call_1_1"]
    assert calls[1].arguments == {"command": "ls\n"} and calls[1].arguments_error is None
    assert message.usage.total_tokens == message.usage.input + message.usage.output > 0


async def test_bad_raw_arguments_give_an_arguments_error():
    faux.set_responses([{"toolCalls": [{"name": "echo", "rawArguments": '{"text": "unterminated'}]}])
    message = (await collect())[-1].message
    call = message.tool_calls()[0]
    assert call.arguments == {}
    assert "received: " in call.arguments_error and "unterminated" in call.arguments_error


async def test_scripted_error_keeps_the_streamed_text():
    faux.set_responses([{"text": "partial", "error": "400 invalid request"}])
    events = await collect()
    assert [e.type for e in events][-2:] == ["text_end", "error"]
    assert events[-1].error.error_message == "400 invalid request" and events[-1].error.text() == "partial"


async def test_scripted_stop_reasons_and_usage():
    faux.set_responses(
        [
            {"text": "cut", "stopReason": "length", "usage": {"input": 9000, "cacheRead": 5}},
            {"text": "x", "stopReason": "aborted"},
        ]
    )
    done = (await collect())[-1]
    assert done.type == "done" and done.reason == "length"
    assert (done.message.usage.input, done.message.usage.cache_read) == (9000, 5)
    assert done.message.usage.total_tokens == 9000 + 5 + done.message.usage.output
    last = (await collect())[-1]
    assert last.type == "error" and last.reason == "aborted" and last.error.error_message == "aborted"


async def test_abort_during_a_delay_ends_promptly():
    faux.set_responses([{"text": "a" * 400, "delayMs": 200, "chunkSize": 4}])
    controller = AbortController()
    events = []
    started = time.monotonic()

    async def consume():
        async for event in run(StreamOptions(signal=controller.signal)):
            events.append(event)
            if event.type == "text_delta":
                controller.abort()

    await asyncio.wait_for(consume(), 5)
    assert time.monotonic() - started < 1.0
    assert events[-1].type == "error" and events[-1].reason == "aborted"
    assert events[-1].error.error_message == "Operation aborted"
    assert events[-1].error.text() == "aaaa"
