"""The pi-messages adapter: the request it sends and the events it builds from the gateway's
stream, in process against the loopback SSE server (bytes cut anywhere) and event by event."""

from __future__ import annotations

import json

import pytest
from pi_provider_radius.stream import PiMessagesError, apply_event, build_request, wire_options
from pi_provider_radius.stream import stream as radius_stream

from pi_host.lib.llm.builder import MessageBuilder
from pi_host.protocol import AssistantMessage, Model, SystemMessage, ToolDecl, UserMessage
from tests.support.providers.openai_google import collect, context, final, options, squeeze, types
from tests.support.providers.radius import KEY, USAGE, sse, text_turn, tool_call_turn
from tests.support.providers.sse import Reply

MAP = {
    "off": None,
    "minimal": None,
    "low": "low",
    "medium": None,
    "high": "high",
    "xhigh": None,
    "max": "max",
}


def model(base_url: str = "http://127.0.0.1:9/v1", **fields) -> Model:
    data = {"id": "kimi-k3", "api": "pi-messages", "provider": "radius", "base_url": base_url,
            "reasoning": True, "thinking_level_map": MAP, **fields}  # fmt: skip
    return Model(**data)


def builder() -> MessageBuilder:
    return MessageBuilder(model())


def feed(events: list[dict]) -> tuple[MessageBuilder, list]:
    b = builder()
    out = [b.start()]
    for event in events:
        out += apply_event(b, event)
    return b, out


# --- event conversion -----------------------------------------------------------------------------


def test_a_tool_call_turn_builds_thinking_text_and_call_with_the_gateways_usage():
    b, events = feed(tool_call_turn("read", {"path": "main.py", "offset": 3}))
    assert squeeze(types(events)) == [
        "start", "thinking_start", "thinking_delta", "thinking_end", "text_start", "text_delta", "text_end",
        "toolcall_start", "toolcall_delta", "toolcall_end", "done",
    ]  # fmt: skip
    message = events[-1].message
    assert message.stop_reason == "toolUse" and message.response_id == "resp-tool"
    thinking, text, call = message.content
    assert thinking.thinking == "Look first." and thinking.thinking_signature == "sig-1"
    assert text.text == "Checking."
    assert (call.id, call.name, call.arguments) == ("call_radius_1", "read", {"path": "main.py", "offset": 3})
    # usage and cost are the gateway's own, not priced again here
    assert message.usage.to_json() == USAGE
    partial_args = [e.partial.content[2].arguments for e in events if e.type == "toolcall_delta"]
    assert partial_args[-1] == {"path": "main.py", "offset": 3}


def test_end_events_carry_the_authoritative_content_signature_and_redaction():
    b, events = feed([
        {"type": "thinking_start", "contentIndex": 0},
        {"type": "thinking_delta", "contentIndex": 0, "delta": "[redacted]"},
        {"type": "thinking_end", "contentIndex": 0, "content": "", "contentSignature": "opaque", "redacted": True},
        {"type": "text_start", "contentIndex": 1},
        {"type": "text_delta", "contentIndex": 1, "delta": "draft"},
        {"type": "text_end", "contentIndex": 1, "content": "final text", "contentSignature": "ts-1"},
        {"type": "done", "reason": "length", "usage": USAGE, "responseModel": "upstream-9",
         "providerThinkingLevel": "max", "rewrite": {"from": "kimi-k3", "to": "kimi-k3.1"}},
    ])  # fmt: skip
    message = events[-1].message
    thinking, text = message.content
    assert thinking.redacted is True and thinking.thinking_signature == "opaque" and thinking.thinking == ""
    assert text.text == "final text" and text.text_signature == "ts-1"
    assert message.stop_reason == "length" and message.response_model == "upstream-9"
    assert message.provider_thinking_level == "max"
    (note,) = message.diagnostics
    assert note["type"] == "pi_messages_rewrite" and note["details"] == {"from": "kimi-k3", "to": "kimi-k3.1"}
    assert isinstance(message.duration_ms, int)


def test_the_final_tool_call_replaces_what_streamed():
    b, events = feed([
        {"type": "toolcall_start", "contentIndex": 0, "id": "early", "toolName": "bash"},
        {"type": "toolcall_delta", "contentIndex": 0, "delta": '{"command": "l'},
        {"type": "toolcall_end", "contentIndex": 0, "toolCall": {
            "type": "toolCall", "id": "call_9", "name": "bash", "arguments": {"command": "ls -la"},
            "thoughtSignature": "ts"}},
        {"type": "done", "reason": "toolUse", "usage": USAGE},
    ])  # fmt: skip
    call = events[-1].message.content[0]
    assert (call.id, call.arguments, call.thought_signature) == ("call_9", {"command": "ls -la"}, "ts")


def test_an_error_event_ends_the_message_with_its_text_and_usage():
    b, events = feed([
        *text_turn("partial")[:3],
        {"type": "error", "reason": "error", "errorMessage": "upstream overloaded", "usage": USAGE, "responseId": "r-9"},
    ])  # fmt: skip
    last = events[-1]
    assert last.type == "error" and last.reason == "error"
    assert last.error.error_message == "upstream overloaded" and last.error.response_id == "r-9"
    assert last.error.content[0].text == "par" and last.error.usage.to_json() == USAGE
    _, aborted = feed([{"type": "error", "reason": "aborted", "errorMessage": "Request was aborted"}])
    assert aborted[-1].reason == "aborted" and aborted[-1].error.stop_reason == "aborted"


@pytest.mark.parametrize(
    "events",
    [
        [{"type": "text_start", "contentIndex": 1}],  # a start must add the next block
        [{"type": "text_delta", "contentIndex": 0, "delta": "x"}],  # no such block
        [{"type": "text_start", "contentIndex": "__proto__"}],
        [{"type": "text_start", "contentIndex": True}],
        [
            {"type": "text_start", "contentIndex": 0},
            {"type": "thinking_delta", "contentIndex": 0, "delta": "x"},
        ],
        [
            {"type": "text_start", "contentIndex": 0},
            {"type": "text_end", "contentIndex": 0},
            {"type": "text_delta", "contentIndex": 0, "delta": "late"},
        ],  # the block has ended
        [{"type": "done", "reason": "finished"}],
        ["not an object"],
    ],
)
def test_events_that_do_not_fit_the_message_are_refused(events):
    with pytest.raises(PiMessagesError):
        feed(events)


def test_start_and_unknown_events_add_nothing():
    b = builder()
    assert apply_event(b, {"type": "start"}) == [] and apply_event(b, {"type": "future_event"}) == []


# --- the request ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "fields", "expected"),
    [
        ("high", {}, {"reasoning": "high", "sessionId": "s1"}),
        ("off", {}, {"reasoning": "low", "sessionId": "s1"}),  # off is not in kimi-k3's map: clamped up
        ("medium", {}, {"reasoning": "high", "sessionId": "s1"}),
        (None, {"thinking_level_map": {"off": "none"}}, {"sessionId": "s1"}),
        ("high", {"reasoning": False}, {"sessionId": "s1"}),
    ],
)
def test_options_carry_the_clamped_pi_level(level, fields, expected):
    sent = wire_options(model(**fields), options(thinking_level=level, session_id="s1"))
    assert sent == expected


def test_options_in_pis_order_and_the_legacy_long_cache_variable(monkeypatch):
    opts = options(thinking_level="max", session_id="s", temperature=0.2, max_tokens=900)
    opts.extra["toolChoice"] = "auto"
    assert list(wire_options(model(), opts)) == [
        "temperature",
        "maxTokens",
        "reasoning",
        "sessionId",
        "toolChoice",
    ]
    monkeypatch.setenv("PI_CACHE_RETENTION", "long")
    assert wire_options(model(), options())["cacheRetention"] == "long"
    assert wire_options(model(), options(cache_retention="none"))["cacheRetention"] == "none"


def test_the_body_is_the_transcript_in_pis_json():
    tools = [ToolDecl(name="ls", description="List", parameters={"type": "object", "properties": {}})]
    ctx = context("hi", tools=tools)
    ctx.messages[0] = SystemMessage(
        content="base", sections={"preamble": "p"}, tools_added=tools, timestamp=5
    )
    body, headers = build_request(model(), ctx, options(api_key=KEY, session_id="s1"), KEY)
    assert list(body) == ["model", "context", "options"] and body["model"] == "kimi-k3"
    system, user = body["context"]["messages"]
    assert system == {"role": "system", "content": "base", "sections": {"preamble": "p"},
                      "toolsAdded": [{"name": "ls", "description": "List",
                                      "parameters": {"type": "object", "properties": {}}}], "timestamp": 5}  # fmt: skip
    assert user["role"] == "user" and user["content"] == "hi"
    assert headers["authorization"] == f"Bearer {KEY}" and headers["accept"] == "text/event-stream"
    # a context without system messages but with tools gets pi's leading one
    bare = context("hi", tools=tools)
    bare.messages = [UserMessage(content="hi", timestamp=1)]
    first = build_request(model(), bare, options(), KEY)[0]["context"]["messages"][0]
    assert first["role"] == "system" and first["toolsAdded"][0]["name"] == "ls" and first["timestamp"] == 0


# --- over HTTP ------------------------------------------------------------------------------------


async def test_streamed_over_http_cut_into_small_chunks(sse_server):
    sse_server.enqueue(Reply.sse(sse(tool_call_turn("ls", {"path": "."})), chunk_size=7))
    m = model(sse_server.url + "/v1/")
    opts = options(api_key=KEY, thinking_level="high", session_id="sess-1", headers={"x-extra": "1"})
    opts.extra["debug"] = True
    events = await collect(radius_stream(m, context("List files"), opts))
    message = final(events)
    assert events[-1].type == "done" and message.tool_calls()[0].arguments == {"path": "."}
    sent = sse_server.last
    assert sent.method == "POST" and sent.path == "/v1/messages?debug=1"
    assert sent.headers["authorization"] == f"Bearer {KEY}" and sent.headers["x-extra"] == "1"
    assert sent.headers["content-type"] == "application/json"
    assert sent.json["options"] == {"reasoning": "high", "sessionId": "sess-1"}
    assert message.api == "pi-messages" and message.provider == "radius"


async def test_a_refused_request_reads_as_pi_says_it(sse_server):
    body = {"error": {"message": f"key {KEY} is over its limit", "code": "rate_limited"}}
    sse_server.enqueue(Reply.json(429, body), Reply.json(502, "Bad gateway page"))
    m = model(sse_server.url + "/v1")
    first = final(await collect(radius_stream(m, context(), options(api_key=KEY))))
    assert first.stop_reason == "error"
    assert first.error_message.startswith("429 Too Many Requests: key ") and first.error_message.endswith(
        "is over its limit (rate_limited)"
    )
    assert KEY not in first.error_message and KEY not in json.dumps(first.diagnostics)
    (note,) = first.diagnostics
    assert note["type"] == "pi_messages_response_failure" and note["error"]["code"] == "rate_limited"
    assert note["details"]["status"] == 429 and note["details"]["url"].endswith("/v1/messages")
    second = final(await collect(radius_stream(m, context(), options(api_key=KEY))))
    assert second.error_message == "502 Bad Gateway: Bad gateway page"
    assert second.diagnostics[0]["details"]["body"] == "Bad gateway page"


async def test_a_stream_without_a_terminal_event_and_a_missing_key_are_errors(sse_server):
    sse_server.enqueue(Reply.sse(sse(text_turn("cut")[:-1])))
    m = model(sse_server.url + "/v1")
    cut = final(await collect(radius_stream(m, context(), options(api_key=KEY))))
    assert cut.error_message == "radius stream ended without a terminal event"
    assert cut.content[0].text == "cut"
    none = final(await collect(radius_stream(m, context(), options(api_key=None))))
    assert none.error_message == 'No API key provided for provider "radius"'
    assert len(sse_server.requests) == 1


async def test_provider_hooks_see_each_gateway_event(sse_server):
    sse_server.enqueue(Reply.sse(sse(text_turn("hi"))))
    seen: list = []
    opts = options(api_key=KEY)
    opts.on_stream_event = seen.append
    opts.on_payload = lambda body: {**body, "model": "swapped"}
    await collect(radius_stream(model(sse_server.url + "/v1"), context(), opts))
    assert [e["type"] for e in seen][0] == "start" and seen[-1]["type"] == "done"
    assert sse_server.last.json["model"] == "swapped"


def test_a_replayed_assistant_message_keeps_every_field():
    previous = AssistantMessage(api="pi-messages", provider="radius", model="kimi-k3", response_id="r1",
                                stop_reason="toolUse", duration_ms=4, thinking_level="high")  # fmt: skip
    ctx = context("hi", messages=[UserMessage(content="a"), previous])
    sent = build_request(model(), ctx, options(), KEY)[0]["context"]["messages"][2]
    assert sent["responseId"] == "r1" and sent["thinkingLevel"] == "high" and sent["stopReason"] == "toolUse"
