"""openai-completions over a real loopback server: events, final message, request JSON."""

from __future__ import annotations

import json

import pytest
from pi_provider_openai.completions import stream_completions

from tests.support.providers.openai_google import (  # noqa: F401 - fixtures
    collect,
    context,
    final,
    make_model,
    module_server_fixture,
    options,
    squeeze,
    sse_fixture,
    types,
)
from tests.support.providers.sse import Reply

ARGS_A = {"path": "src/ünï/main.py", "offset": 10, "limit": 40}
ARGS_B = {"command": 'grep -rn "TODO" src | head -n 5', "timeout": 30}


async def run(server, fixture, chunk_size=7, model=None, **opts):
    server.enqueue(Reply.from_fixture(f"openai/{fixture}", chunk_size=chunk_size))
    model = model or make_model(server.url + "/v1")
    return await collect(stream_completions(model, context(), options(**opts)))


async def test_text_stream_split_utf8_usage_and_request(sse):
    events = await run(sse, "completions_text.sse", chunk_size=5)
    assert squeeze(types(events)) == ["start", "text_start", "text_delta", "text_end", "done"]
    message = final(events)
    assert message.text() == "Héllo wörld — ünïcode ✓ and an emoji 🎉 at the end."
    assert events[-2].content == message.text()
    assert message.stop_reason == "stop" and message.raw_stop_reason == "stop"
    assert message.response_id == "chatcmpl-fx1"
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (20, 15, 100, 0)
    assert usage.total_tokens == 135
    assert usage.cost.input == pytest.approx(20 * 3 / 1e6)
    assert usage.cost.cache_read == pytest.approx(100 * 0.3 / 1e6)
    assert usage.cost.total == pytest.approx((20 * 3 + 15 * 15 + 100 * 0.3) / 1e6)

    request = sse.last
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test-key"
    body = request.json
    # Reference §11 item 10: a custom provider on a non-OpenAI host.
    assert body["model"] == "qwen3-coder"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["store"] is False
    assert body["max_completion_tokens"] == 8192
    assert body["messages"][0] == {"role": "system", "content": "You are a test assistant."}
    assert body["messages"][1] == {"role": "user", "content": "Read main.py"}
    assert [t["function"]["name"] for t in body["tools"]] == ["read", "bash"]
    assert all("strict" not in t["function"] for t in body["tools"])
    assert "reasoning_effort" not in body and "prompt_cache_key" not in body


async def test_tool_calls_thinking_and_end_events_at_stream_end(sse):
    model = make_model(sse.url + "/v1", reasoning=True)
    events = await run(sse, "completions_tools.sse", chunk_size=11, model=model, thinking_level="medium")
    names = types(events)
    # Every *_end comes together at the end, in block order, after the last tool-call delta.
    tail = names[-5:]
    assert tail == ["thinking_end", "text_end", "toolcall_end", "toolcall_end", "done"]
    assert max(i for i, n in enumerate(names) if n == "toolcall_delta") < names.index("thinking_end")
    message = final(events)
    assert [b.type for b in message.content] == ["thinking", "text", "toolCall", "toolCall"]
    thinking = message.content[0]
    assert thinking.thinking == "The user wants two things. Let me read the file — then grep."
    assert thinking.thinking_signature == "reasoning_content"
    assert message.content[1].text == "Reading now."
    call_a, call_b = message.content[2], message.content[3]
    assert (call_a.id, call_a.name, call_a.arguments) == ("call_A1", "read", ARGS_A)
    assert (call_b.id, call_b.name, call_b.arguments) == ("call_B2", "bash", ARGS_B)
    assert call_a.arguments_error is None
    assert message.stop_reason == "toolUse" and message.raw_stop_reason == "tool_calls"
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write, usage.reasoning) == (
        400,
        300,
        1500,
        100,
        120,
    )
    assert usage.total_tokens == 2300
    # Content indexes point at the blocks; toolcall_start indexes are 2 and 3.
    starts = [e.content_index for e in events if e.type == "toolcall_start"]
    assert starts == [2, 3]
    body = sse.last.json
    assert body["reasoning_effort"] == "medium"


async def test_partial_tool_arguments_while_streaming(sse):
    """Reference §2.3: partial arguments are a best-effort object, at least {}."""
    model = make_model(sse.url + "/v1")
    sse.enqueue(Reply.from_fixture("openai/completions_tools.sse", chunk_size=64))
    seen = []
    async for event in stream_completions(model, context(), options()):
        if event.type == "toolcall_delta" and event.content_index == 2:
            seen.append((event.delta, dict(event.partial.content[2].arguments)))
    assert seen[0] == ("", {})
    assert all(isinstance(args, dict) for _, args in seen)
    # Mid-way the path is visible as a prefix of the final value.
    paths = [args.get("path") for _, args in seen if args.get("path")]
    assert paths and all(ARGS_A["path"].startswith(p) for p in paths)
    assert any(p != ARGS_A["path"] for p in paths)
    assert seen[-1][1] == ARGS_A


async def test_reasoning_field_name_kept(sse):
    events = await run(sse, "completions_tools_reasoning_field.sse")
    message = final(events)
    assert message.content[0].thinking_signature == "reasoning"
    assert message.response_model == "gpt-oss:20b"


async def test_missing_finish_reason_is_an_error_unless_compat_says_otherwise(sse):
    events = await run(sse, "completions_no_finish.sse")
    message = final(events)
    assert events[-1].type == "error" and message.stop_reason == "error"
    assert "without a finish reason" in message.error_message
    assert message.text() == "Partial answer"  # what streamed is kept
    assert message.usage.is_empty()

    model = make_model(
        sse.url + "/v1", compat={"supportsFinishReason": False, "supportsUsageInStreaming": False}
    )
    events = await run(sse, "completions_no_finish.sse", model=model)
    assert events[-1].type == "done" and final(events).stop_reason == "stop"
    assert "stream_options" not in sse.last.json


@pytest.mark.parametrize(
    ("fixture", "kind", "stop", "needle"),
    [
        ("completions_length.sse", "done", "length", None),
        ("completions_content_filter.sse", "error", "error", "content_filter"),
    ],
)
async def test_finish_reason_mapping(sse, fixture, kind, stop, needle):
    events = await run(sse, fixture)
    message = final(events)
    assert events[-1].type == kind and message.stop_reason == stop
    if needle:
        assert needle in message.error_message
    assert message.text() == "Some text"


async def test_events_carry_the_live_partial(sse):
    events = await run(sse, "completions_text.sse")
    partial = events[0].partial
    assert partial.stop_reason in ("pending", "stop")
    assert all(e.partial is partial for e in events[:-1])
    assert final(events) is partial


async def test_request_carries_transcript_conversion(sse):
    from pi_host.protocol import (
        AssistantMessage,
        TextContent,
        ThinkingContent,
        ToolCall,
        ToolResultMessage,
        UserMessage,
    )

    sse.enqueue(Reply.from_fixture("openai/completions_text.sse"))
    model = make_model(sse.url + "/v1", reasoning=True)
    prior = AssistantMessage(
        api="openai-completions",
        provider="local",
        model="qwen3-coder",
        stop_reason="toolUse",
        content=[
            ThinkingContent(thinking="need grep", thinking_signature="reasoning_content"),
            ToolCall(id="call_9", name="bash", arguments={"command": "grep -rc TODO ."}),
        ],
    )
    ctx = context(
        messages=[
            UserMessage(content=[TextContent(text="Count the TODOs"), TextContent(text="")]),
            prior,
            ToolResultMessage(tool_call_id="call_9", tool_name="bash", content=[TextContent(text="4\n")]),
        ]
    )
    await collect(stream_completions(model, ctx, options(thinking_level="off")))
    body = sse.last.json
    assert body["messages"][1:] == [
        {"role": "user", "content": [{"type": "text", "text": "Count the TODOs"}]},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "need grep",
            "tool_calls": [
                {
                    "id": "call_9",
                    "type": "function",
                    "function": {
                        "name": "bash",
                        "arguments": json.dumps({"command": "grep -rc TODO ."}, separators=(",", ":")),
                    },
                }
            ],
        },
        {"role": "tool", "content": "4\n", "tool_call_id": "call_9"},
    ]
    assert "reasoning_effort" not in body  # off, and no explicit off mapping


async def test_content_part_lists_and_refusals(sse):
    """Mistral streams content as typed parts (thinking with nested text); OpenAI sends refusals
    in their own field. Both end up as blocks."""
    from tests.support.providers.sse import sse_events

    def chunk(delta, finish=None):
        return (None, {"id": "x", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    text = (
        sse_events(
            [
                chunk(
                    {
                        "role": "assistant",
                        "content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Hmm, "}]}],
                    }
                ),
                chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "ok."}]}]}),
                chunk({"content": [{"type": "text", "text": "Answer "}]}),
                chunk({"content": "done. "}),
                chunk({"refusal": "I can't help with the rest."}),
                chunk({}, "stop"),
            ]
        )
        + "data: [DONE]\n\n"
    )
    sse.enqueue(Reply.sse(text, chunk_size=9))
    message = final(await collect(stream_completions(make_model(sse.url + "/v1"), context(), options())))
    assert [b.type for b in message.content] == ["thinking", "text"]
    assert message.content[0].thinking == "Hmm, ok."
    assert message.text() == "Answer done. I can't help with the rest."


async def test_groq_usage_in_x_groq(sse):
    from tests.support.providers.sse import sse_events

    def chunk(delta, finish=None, **extra):
        return (
            None,
            {"id": "g", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra},
        )

    text = (
        sse_events(
            [
                chunk({"role": "assistant", "content": "Hi"}),
                chunk({"content": " there"}),
                chunk(
                    {},
                    "stop",
                    x_groq={
                        "id": "req_1",
                        "usage": {"prompt_tokens": 30, "completion_tokens": 2, "total_tokens": 32},
                    },
                ),
            ]
        )
        + "data: [DONE]\n\n"
    )
    sse.enqueue(Reply.sse(text))
    message = final(
        await collect(stream_completions(make_model(sse.url + "/v1", provider="groq"), context(), options()))
    )
    assert message.text() == "Hi there"
    assert (message.usage.input, message.usage.output, message.usage.total_tokens) == (30, 2, 32)
