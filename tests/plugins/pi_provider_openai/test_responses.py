"""openai-responses over a real loopback server: reasoning items with encrypted content,
``call_id|item_id`` tool calls, per-item block ends, usage, request JSON and replay."""

from __future__ import annotations

import json

from pi_provider_openai.responses import stream_responses

from pi_host.protocol import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
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


def model_for(sse, **fields):
    fields.setdefault("reasoning", True)
    fields.setdefault("input", ["text", "image"])
    return make_model(sse.url + "/v1", api="openai-responses", provider="openai", id="gpt-5-mini", **fields)


async def run(sse, fixture="responses_tools.sse", chunk_size=9, ctx=None, **opts):
    sse.enqueue(Reply.from_fixture(f"openai/{fixture}", chunk_size=chunk_size))
    return await collect(stream_responses(model_for(sse), ctx or context(), options(**opts)))


async def test_reasoning_text_and_function_call(sse):
    events = await run(sse, thinking_level="high", session_id="sess-1")
    assert squeeze(types(events)) == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_end",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_end",
        "done",
    ]
    message = final(events)
    thinking, text, call = message.content
    assert thinking.thinking == "**Planning** I should read the file first.\n\nThen answer — briefly ✓."
    item = json.loads(thinking.thinking_signature)
    assert (
        item["type"] == "reasoning"
        and item["id"] == "rs_fx1"
        and item["encrypted_content"].startswith("gAAAA")
    )
    assert text.text == "I'll read it — «main.py» 📄." and text.text_signature == "msg_fx1"
    assert call.id == "call_fx1|fc_fx1" and call.name == "read" and call.arguments == ARGS_A
    assert message.stop_reason == "toolUse" and message.response_id == "resp_fx1"
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.reasoning) == (388, 240, 512, 128)
    assert usage.total_tokens == 1140

    request = sse.last
    assert request.path == "/v1/responses"
    body = request.json
    assert body["model"] == "gpt-5-mini" and body["stream"] is True and body["store"] is False
    assert body["prompt_cache_key"] == "sess-1"
    assert body["max_output_tokens"] == 8192
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["input"][0] == {"role": "developer", "content": "You are a test assistant."}
    assert body["input"][1] == {"role": "user", "content": [{"type": "input_text", "text": "Read main.py"}]}
    assert body["tools"][0] == {
        "type": "function",
        "name": "read",
        "description": "Read a file",
        "parameters": body["tools"][0]["parameters"],
    }  # no strict mode on this model (supportsStrictMode unset): no "strict" key, as pi 1.6.0


async def test_thinking_off_sends_effort_none(sse):
    await run(sse, thinking_level="off")
    body = sse.last.json
    assert body["reasoning"] == {"effort": "none"}
    assert "include" not in body


async def test_replay_of_own_turn_round_trips_items(sse):
    first = final(await run(sse, thinking_level="medium"))
    result = ToolResultMessage(
        tool_call_id=first.content[2].id, tool_name="read", content=[TextContent(text="print(1)")]
    )
    ctx = context(messages=[UserMessage(content="Read main.py"), first, result])
    await run(sse, ctx=ctx, thinking_level="medium")
    items = sse.last.json["input"]
    assert [i.get("type", i.get("role")) for i in items] == [
        "developer",
        "user",
        "reasoning",
        "message",
        "function_call",
        "function_call_output",
    ]
    assert items[2]["encrypted_content"].startswith("gAAAA") and items[2]["id"] == "rs_fx1"
    assert items[3]["id"] == "msg_fx1" and items[3]["content"][0]["text"] == "I'll read it — «main.py» 📄."
    assert items[4] == {
        "type": "function_call",
        "call_id": "call_fx1",
        "name": "read",
        "arguments": json.dumps(ARGS_A, ensure_ascii=False, separators=(",", ":")),
        "id": "fc_fx1",
    }
    assert items[5] == {"type": "function_call_output", "call_id": "call_fx1", "output": "print(1)"}


async def test_foreign_turn_drops_thinking_and_normalises_ids(sse):
    foreign = AssistantMessage(
        api="anthropic-messages",
        provider="anthropic",
        model="claude-x",
        stop_reason="toolUse",
        content=[
            ThinkingContent(thinking="secret", thinking_signature="sig"),
            TextContent(text="ok"),
            ToolCall(id="toolu_01+/=", name="bash", arguments={"command": "ls"}),
        ],
    )
    result = ToolResultMessage(
        tool_call_id="toolu_01+/=", tool_name="bash", content=[TextContent(text="a\nb")]
    )
    ctx = context(messages=[UserMessage(content="list"), foreign, result])
    await run(sse, ctx=ctx)
    items = sse.last.json["input"]
    assert not any(i.get("type") == "reasoning" for i in items)
    call = next(i for i in items if i.get("type") == "function_call")
    output = next(i for i in items if i.get("type") == "function_call_output")
    assert call["call_id"] == output["call_id"]
    assert set(call["call_id"]) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
    assert call["id"].startswith("fc_")


async def test_incomplete_is_length(sse):
    message = final(await run(sse, "responses_incomplete.sse"))
    assert message.stop_reason == "length" and message.raw_stop_reason == "max_output_tokens"
    assert message.text() == "Cut off mid"


async def test_failed_response_is_an_error_with_the_server_message(sse):
    events = await run(sse, "responses_failed.sse")
    assert events[-1].type == "error"
    assert "The server had an error" in final(events).error_message


async def test_stream_without_completion_is_an_error(sse):
    raw = Reply.from_fixture("openai/responses_tools.sse").parts[0]
    cut = raw[: raw.index(b"event: response.completed")]
    sse.enqueue(Reply.sse(cut, chunk_size=100))
    message = final(await collect(stream_responses(model_for(sse), context(), options())))
    assert message.stop_reason == "error" and "before the response completed" in message.error_message
    assert message.content[2].arguments == ARGS_A  # what streamed is kept


async def test_http_error_body_is_reported(sse):
    sse.enqueue(
        Reply.json(
            400,
            {
                "error": {
                    "message": "Unsupported parameter: 'reasoning.effort'",
                    "type": "invalid_request_error",
                    "param": "reasoning.effort",
                }
            },
        )
    )
    message = final(await collect(stream_responses(model_for(sse), context(), options())))
    assert message.error_message.startswith("400") and "reasoning.effort" in message.error_message


async def test_stall_times_out_and_500_is_retried(sse):
    """A stalled stream ends with a timeout error; a 500 followed by a good stream succeeds."""
    from tests.support.providers.sse import FIXTURES, STALL

    raw = (FIXTURES / "openai/responses_tools.sse").read_bytes()
    sse.enqueue(Reply(parts=[raw[:2000], STALL]))
    message = final(await collect(stream_responses(model_for(sse), context(), options(idle_timeout_ms=250))))
    assert message.stop_reason == "error" and "timed out" in message.error_message.lower()
    assert message.content and message.content[0].type == "thinking"

    sse.enqueue(
        Reply.json(500, {"error": {"message": "oops", "type": "server_error"}}),
        Reply.from_fixture("openai/responses_tools.sse", chunk_size=300),
    )
    retry = {"maxRetries": 1, "baseDelayMs": 5}
    message = final(await collect(stream_responses(model_for(sse), context(), options(retry=retry))))
    assert message.stop_reason == "toolUse" and len(sse.requests) == 3


def test_request_options_and_roles():
    from pi_provider_openai.responses import prepare

    plain = make_model("http://127.0.0.1:9/v1", api="openai-responses", provider="openai", id="gpt-4.1")
    url, body, headers = prepare(
        plain, context(), options(cache_retention="none", session_id="s", temperature=0.3)
    )
    assert url == "http://127.0.0.1:9/v1/responses" and headers["authorization"] == "Bearer sk-test-key"
    assert body["input"][0]["role"] == "system"  # not a reasoning model
    assert "prompt_cache_key" not in body and "reasoning" not in body and body["temperature"] == 0.3

    reasoner = make_model(
        "http://127.0.0.1:9/v1",
        api="openai-responses",
        provider="lm",
        id="r1",
        reasoning=True,
        compat={"supportsDeveloperRole": False, "supportsMaxOutputTokens": False},
        thinkingLevelMap={"off": "minimal", "xhigh": "xhigh"},
    )
    _, body, _ = prepare(
        reasoner, context(), options(thinking_level="xhigh", session_id="s", cache_retention="long")
    )
    assert body["input"][0]["role"] == "system"
    assert "max_output_tokens" not in body
    assert body["reasoning"] == {"effort": "xhigh", "summary": "auto"}
    assert body["prompt_cache_key"] == "s" and body["prompt_cache_retention"] == "24h"
    _, body, _ = prepare(reasoner, context(), options(thinking_level="off"))
    assert body["reasoning"] == {"effort": "minimal"}


async def test_raw_reasoning_text_and_summaryless_encrypted_item(sse):
    """Open-weight servers stream ``response.reasoning_text.delta``; OpenAI may return a reasoning
    item with no summary but encrypted content, which must still be kept for replay."""
    from tests.support.providers.sse import sse_events

    def ev(name, **data):
        return (name, {"type": name, **data})

    text = sse_events(
        [
            ev("response.created", response={"id": "resp_r", "status": "in_progress"}),
            ev(
                "response.output_item.added",
                output_index=0,
                item={"id": "rs_a", "type": "reasoning", "summary": []},
            ),
            ev(
                "response.reasoning_text.delta",
                item_id="rs_a",
                output_index=0,
                content_index=0,
                delta="think ",
            ),
            ev(
                "response.reasoning_text.delta", item_id="rs_a", output_index=0, content_index=0, delta="hard"
            ),
            ev(
                "response.output_item.done",
                output_index=0,
                item={
                    "id": "rs_a",
                    "type": "reasoning",
                    "summary": [],
                    "content": [{"type": "reasoning_text", "text": "think hard"}],
                },
            ),
            ev(
                "response.output_item.added",
                output_index=1,
                item={"id": "rs_b", "type": "reasoning", "summary": []},
            ),
            ev(
                "response.output_item.done",
                output_index=1,
                item={"id": "rs_b", "type": "reasoning", "summary": [], "encrypted_content": "gAAAAB=="},
            ),
            ev(
                "response.completed",
                response={
                    "id": "resp_r",
                    "status": "completed",
                    "usage": {"input_tokens": 5, "output_tokens": 2},
                },
            ),
        ]
    )
    sse.enqueue(Reply.sse(text, chunk_size=31))
    message = final(await collect(stream_responses(model_for(sse), context(), options(thinking_level="low"))))
    first, second = message.content
    assert first.thinking == "think hard"
    assert second.thinking == "" and json.loads(second.thinking_signature)["encrypted_content"] == "gAAAAB=="
    assert message.stop_reason == "stop"
    # Both are replayed to the same model (signed blocks are kept even when empty).
    ctx = context(messages=[UserMessage(content="q"), message, UserMessage(content="next")])
    sse.enqueue(Reply.from_fixture("openai/responses_incomplete.sse"))
    await collect(stream_responses(model_for(sse), ctx, options(thinking_level="low")))
    kinds = [i.get("type", i.get("role")) for i in sse.last.json["input"]]
    assert kinds == ["developer", "user", "reasoning", "reasoning", "user"]
