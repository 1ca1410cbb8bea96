"""anthropic-messages against recorded SSE byte streams served on 127.0.0.1."""

from __future__ import annotations

import time

import pytest

from pi_host.protocol import StreamOptions
from tests.support.providers.anthropic import model_for, run, simple_context
from tests.support.providers.sse import FIXTURES, Reply


@pytest.mark.parametrize("chunk_size", [None, 1, 5, 13])
async def test_text_stream_with_split_utf8_and_pings(sse_server, chunk_size):
    sse_server.enqueue(Reply.from_fixture("anthropic/anthropic_text.sse", chunk_size=chunk_size))
    events, snaps = await run(model_for(sse_server.url), simple_context(), snapshot=True)
    kinds = [e.type for e in events]
    assert kinds == ["start", "text_start", "text_delta", "text_delta", "text_delta", "text_end", "done"]
    final = events[-1].message
    assert final.text() == "Héllo wörld ☃ 日本語 🎉!"
    assert events[-2].content == final.text()
    assert final.stop_reason == "stop" and final.raw_stop_reason == "end_turn"
    assert final.response_id == "msg_01TextFixture"
    assert final.response_model == "claude-sonnet-4-5-20250929"
    assert (final.usage.input, final.usage.output, final.usage.total_tokens) == (25, 15, 40)
    assert final.usage.cost.total == pytest.approx((25 * 3 + 15 * 15) / 1e6)
    # the partial is live while streaming: pending, growing text, and one shared object
    assert all(s.stop_reason == "pending" for s in snaps[:-1])
    assert [s.content[0].text for s in snaps[2:5]] == [
        "Héllo wörld",
        "Héllo wörld ☃ 日本語 🎉",
        "Héllo wörld ☃ 日本語 🎉!",
    ]
    assert all(e.partial is events[0].partial for e in events[:-1])


async def test_thinking_signature_and_tool_call_arguments_streamed_in_pieces(sse_server):
    sse_server.enqueue(Reply.from_fixture("anthropic/anthropic_thinking_tool.sse", chunk_size=7))
    events, snaps = await run(model_for(sse_server.url), simple_context(), snapshot=True)
    final = events[-1].message
    assert events[-1].type == "done" and events[-1].reason == "toolUse"
    thinking, text, call = final.content
    assert thinking.thinking == "The user wants the file list. I'll run ls — naïvely."
    assert thinking.thinking_signature == "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
    assert text.text == "Let me look."
    assert call.id == "toolu_01A09q90qw90lq917835lq9" and call.name == "bash"
    assert call.arguments == {"command": "ls -la src/ | grep 'é'", "timeout": 30}
    assert call.arguments_error is None
    # partial arguments were visible while the JSON streamed
    deltas = [(e, s) for e, s in zip(events, snaps, strict=True) if e.type == "toolcall_delta"]
    assert deltas[0][0].delta == "" and deltas[0][1].content[2].arguments == {}
    seen = [s.content[2].arguments for _, s in deltas]
    assert {"command": "ls"} in seen and {"command": "ls -l"} in seen
    assert any(a.get("command", "").startswith("ls -la src/ | gr") and "timeout" not in a for a in seen)
    assert seen[-1] == call.arguments
    end = next(e for e in events if e.type == "toolcall_end")
    assert end.tool_call.arguments == call.arguments and end.content_index == 2
    usage = final.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (472, 89, 2000, 100)
    assert usage.total_tokens == 472 + 89 + 2000 + 100
    assert usage.cost.cache_read == pytest.approx(2000 * 0.3 / 1e6)


async def test_redacted_thinking_keeps_opaque_data(sse_server):
    sse_server.enqueue(Reply.from_fixture("anthropic/anthropic_redacted.sse", chunk_size=11))
    events = await run(model_for(sse_server.url), simple_context())
    block = events[-1].message.content[0]
    assert block.redacted is True
    assert block.thinking_signature.startswith("EmwKAhgBEgy3va3pzix")
    assert block.thinking  # a placeholder, never empty
    assert events[-1].message.text() == "Done."


async def test_error_event_mid_stream_keeps_partial_text(sse_server):
    sse_server.enqueue(Reply.from_fixture("anthropic/anthropic_error_event.sse"))
    events = await run(model_for(sse_server.url), simple_context())
    assert [e.type for e in events] == ["start", "text_start", "text_delta", "error"]
    error = events[-1].error
    assert error.stop_reason == "error"
    assert error.error_message == "overloaded_error: Overloaded"
    assert error.text() == "Partial"


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (
            400,
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 210000 tokens > 200000 maximum",
                },
            },
            "400 invalid_request_error: prompt is too long",
        ),
        (
            401,
            {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}},
            "401 authentication_error: invalid x-api-key",
        ),
        (
            429,
            {
                "type": "error",
                "error": {
                    "type": "rate_limit_error",
                    "message": "Number of requests has exceeded your rate limit",
                },
            },
            "429 rate_limit_error",
        ),
        (
            500,
            {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}},
            "500 api_error: Internal server error",
        ),
        (
            529,
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            "529 overloaded_error: Overloaded",
        ),
        (502, "<html>Bad gateway</html>", "502 <html>Bad gateway</html>"),
        (500, "", "500 status code (no body)"),
    ],
)
async def test_http_errors_become_one_clear_error_event(sse_server, status, body, expected):
    sse_server.enqueue(Reply.json(status, body))
    events = await run(model_for(sse_server.url), simple_context())
    assert [e.type for e in events] == ["error"]
    assert events[0].error.stop_reason == "error"
    assert events[0].error.error_message.startswith(expected)
    assert "\n" not in events[0].error.error_message


async def test_retry_after_is_honoured_then_succeeds(sse_server):
    sse_server.enqueue(
        Reply.json(
            429,
            {"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}},
            {"retry-after": "0.2"},
        ),
        Reply.json(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        Reply.from_fixture("anthropic/anthropic_text.sse"),
    )
    options = StreamOptions(api_key="k", retry={"maxRetries": 3, "baseDelayMs": 50})
    started = time.monotonic()
    events = await run(model_for(sse_server.url), simple_context(), options)
    assert events[-1].type == "done"
    assert len(sse_server.requests) == 3
    assert time.monotonic() - started >= 0.2
    assert sse_server.requests[0].json == sse_server.requests[2].json


async def test_retries_exhausted_reports_last_error(sse_server):
    for _ in range(3):
        sse_server.enqueue(
            Reply.json(503, {"type": "error", "error": {"type": "api_error", "message": "busy"}})
        )
    options = StreamOptions(api_key="k", retry={"maxRetries": 2, "baseDelayMs": 10})
    events = await run(model_for(sse_server.url), simple_context(), options)
    assert events[-1].error.error_message == "503 api_error: busy"
    assert len(sse_server.requests) == 3


async def test_no_retry_by_default_and_none_for_400(sse_server):
    sse_server.enqueue(Reply.json(429, {"error": {"type": "rate_limit_error", "message": "x"}}))
    events = await run(model_for(sse_server.url), simple_context())
    assert events[-1].type == "error" and len(sse_server.requests) == 1
    sse_server.enqueue(Reply.json(400, {"error": {"type": "invalid_request_error", "message": "bad"}}))
    options = StreamOptions(api_key="k", retry={"maxRetries": 3, "baseDelayMs": 10})
    events = await run(model_for(sse_server.url), simple_context(), options)
    assert events[-1].type == "error" and len(sse_server.requests) == 2


@pytest.mark.parametrize(
    ("raw", "stop", "overflow"),
    [
        ("max_tokens", "length", False),
        ("pause_turn", "stop", False),
        ("stop_sequence", "stop", False),
        ("refusal", "error", False),
        ("model_context_window_exceeded", "error", True),
        ("brand_new", "error", False),
    ],
)
async def test_stop_reason_mapping(sse_server, raw, stop, overflow):
    from pi_host.protocol.failures import is_context_overflow

    data = (
        (FIXTURES / "anthropic" / "anthropic_text.sse")
        .read_text()
        .replace('"stop_reason":"end_turn"', f'"stop_reason":"{raw}"')
    )
    sse_server.enqueue(Reply.sse(data))
    events = await run(model_for(sse_server.url), simple_context())
    message = events[-1].message if events[-1].type == "done" else events[-1].error
    assert message.stop_reason == stop and message.raw_stop_reason == raw
    assert message.text() == "Héllo wörld ☃ 日本語 🎉!"
    if stop == "error":
        assert message.error_message
    assert is_context_overflow(message) is overflow
