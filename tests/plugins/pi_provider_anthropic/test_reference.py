"""Independent peers for anthropic-messages.

* The official ``anthropic`` SDK parses the same recorded bytes: its final message must match ours.
* ``llm-mock-api`` (a fake server we did not write) answers our requests in the Anthropic format.
"""

from __future__ import annotations

import pytest

from tests.support.lazy import LazyModule
from tests.support.providers.anthropic import model_for, run, simple_context
from tests.support.providers.sse import Reply

anthropic = LazyModule("anthropic")

FIXTURES = [
    "anthropic/anthropic_text.sse",
    "anthropic/anthropic_thinking_tool.sse",
    "anthropic/anthropic_redacted.sse",
]


def sdk_summary(message) -> dict:
    out = {"text": "", "thinking": [], "redacted": [], "tools": []}
    for block in message.content:
        if block.type == "text":
            out["text"] += block.text
        elif block.type == "thinking":
            out["thinking"].append((block.thinking, block.signature))
        elif block.type == "redacted_thinking":
            out["redacted"].append(block.data)
        elif block.type == "tool_use":
            out["tools"].append((block.id, block.name, block.input))
    out["stop"] = message.stop_reason
    out["usage"] = (message.usage.input_tokens, message.usage.output_tokens)
    return out


def our_summary(message) -> dict:
    out = {"text": message.text(), "thinking": [], "redacted": [], "tools": []}
    for block in message.content:
        if block.type == "thinking":
            if block.redacted:
                out["redacted"].append(block.thinking_signature)
            else:
                out["thinking"].append((block.thinking, block.thinking_signature))
        elif block.type == "toolCall":
            out["tools"].append((block.id, block.name, block.arguments))
    out["stop"] = message.raw_stop_reason
    out["usage"] = (message.usage.input, message.usage.output)
    return out


@pytest.mark.parametrize("fixture", FIXTURES)
async def test_same_bytes_same_result_as_official_sdk(sse_server, fixture):
    sse_server.enqueue(Reply.from_fixture(fixture, chunk_size=9), Reply.from_fixture(fixture, chunk_size=9))
    client = anthropic.AsyncAnthropic(base_url=sse_server.url, api_key="sk-test", max_retries=0)
    async with client.messages.stream(
        model="claude-opus-5-5", max_tokens=1024, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        reference = await stream.get_final_message()
    await client.close()
    events = await run(model_for(sse_server.url), simple_context())
    assert events[-1].type == "done"
    assert our_summary(events[-1].message) == sdk_summary(reference)


async def test_llm_mock_api_peer_text_and_tool_call():
    mock = pytest.importorskip("llm_mock_api")
    server = mock.MockServer(
        mock.MockServerOptions(port=0, host="127.0.0.1", default_latency=0, default_chunk_size=4)
    )
    server.when("weather").reply(
        mock.ReplyObject(
            text="Let me check the weather.",
            reasoning="User wants weather.",
            tools=[mock.ToolCall(name="bash", args={"command": "curl wttr.in/Oslo", "unit": "°C"})],
        )
    )
    server.when("hello").reply("Hello there, friend ✓")
    await server.start()
    try:
        model = model_for(server.url, id="claude-mock")
        events = await run(model, simple_context("hello"))
        final = events[-1].message
        assert events[-1].type == "done" and final.stop_reason == "stop"
        assert final.text() == "Hello there, friend ✓"
        assert sum(1 for e in events if e.type == "text_delta") >= 3  # chunked by the peer
        events = await run(model, simple_context("what is the weather"))
        final = events[-1].message
        assert events[-1].reason == "toolUse"
        assert final.text() == "Let me check the weather."
        assert [b.thinking for b in final.content if b.type == "thinking"] == ["User wants weather."]
        call = final.tool_calls()[0]
        assert (call.name, call.arguments) == ("bash", {"command": "curl wttr.in/Oslo", "unit": "°C"})
        recorded = server.history.all
        assert len(recorded) == 2
        assert recorded[0].request.format == "anthropic" and recorded[0].request.model == "claude-mock"
        assert recorded[1].request.streaming is True
    finally:
        await server.stop()
