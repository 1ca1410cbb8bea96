"""openai-completions faults: HTTP errors, retries, dropped and stalled streams, malformed chunks,
abort. Each ends in one clear error event (keeping what streamed) or a successful retry."""

from __future__ import annotations

import asyncio
import time

import pytest
from pi_provider_openai.completions import stream_completions

from pi_host.protocol.abort import AbortController
from tests.support.providers.openai_google import (  # noqa: F401 - fixtures
    collect,
    context,
    final,
    make_model,
    module_server_fixture,
    options,
    sse_fixture,
    types,
)
from tests.support.providers.sse import DROP, FIXTURES, STALL, Reply

FAST_RETRY = {"maxRetries": 2, "baseDelayMs": 10, "maxRetryDelayMs": 5000}


def stream(sse, **opts):
    return stream_completions(make_model(sse.url + "/v1"), context(), options(**opts))


@pytest.mark.parametrize(
    ("status", "body", "needle"),
    [
        (
            400,
            {"error": {"message": "Invalid 'messages[1].content'", "type": "invalid_request_error"}},
            "400 invalid_request_error: Invalid",
        ),
        (
            401,
            {
                "error": {
                    "message": "Incorrect API key provided",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            },
            "Incorrect API key",
        ),
        (
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 8192 tokens",
                    "type": "invalid_request_error",
                }
            },
            "maximum context length",
        ),
    ],
)
async def test_http_errors_end_in_one_error_event(sse, status, body, needle):
    sse.enqueue(Reply.json(status, body))
    events = await collect(stream(sse, retry=FAST_RETRY))
    assert types(events) == ["error"]
    message = final(events)
    assert message.stop_reason == "error"
    assert needle in message.error_message
    assert str(status) in message.error_message
    assert len(sse.requests) == 1  # 4xx other than 429 is not retried


async def test_context_overflow_text_is_recognised(sse):
    from pi_host.protocol.failures import is_context_overflow

    sse.enqueue(
        Reply.json(
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens",
                    "type": "invalid_request_error",
                }
            },
        )
    )
    message = final(await collect(stream(sse)))
    assert is_context_overflow(message)


@pytest.mark.parametrize("status", [429, 500, 503])
async def test_transient_status_is_retried_then_succeeds(sse, status):
    sse.enqueue(
        Reply.json(
            status,
            {"error": {"message": "try again", "type": "server_error"}},
            headers={"retry-after-ms": "20"},
        ),
        Reply.from_fixture("openai/completions_text.sse", chunk_size=50),
    )
    events = await collect(stream(sse, retry=FAST_RETRY))
    assert events[-1].type == "done"
    assert final(events).text().startswith("Héllo")
    assert len(sse.requests) == 2
    assert sse.requests[0].body == sse.requests[1].body


async def test_retries_exhausted_reports_the_last_status(sse):
    for _ in range(3):
        sse.enqueue(Reply.json(500, {"error": {"message": "boom", "type": "server_error"}}))
    message = final(await collect(stream(sse, retry=FAST_RETRY)))
    assert (
        message.stop_reason == "error" and "500" in message.error_message and "boom" in message.error_message
    )
    assert len(sse.requests) == 3


async def test_no_provider_retries_by_default(sse):
    sse.enqueue(Reply.json(429, {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}))
    message = final(await collect(stream(sse)))
    assert "429" in message.error_message and "Rate limit" in message.error_message
    assert len(sse.requests) == 1


async def test_connection_dropped_mid_stream_keeps_partial_text(sse):
    raw = (FIXTURES / "openai/completions_text.sse").read_bytes()
    sse.enqueue(Reply(parts=[raw[:900], DROP]))
    events = await collect(stream(sse))
    message = final(events)
    assert events[0].type == "start" and events[-1].type == "error"
    assert message.stop_reason == "error"
    assert message.text() and "Héllo".startswith(message.text()[:5])
    assert "onnection" in message.error_message or "etwork" in message.error_message


async def test_malformed_chunk_ends_the_stream_with_an_error(sse):
    sse.enqueue(Reply.from_fixture("openai/completions_malformed.sse"))
    message = final(await collect(stream(sse)))
    assert message.stop_reason == "error"
    assert "Malformed" in message.error_message
    assert message.text() == "Before the break"


async def test_error_chunk_inside_the_stream(sse):
    sse.enqueue(Reply.from_fixture("openai/completions_stream_error.sse"))
    message = final(await collect(stream(sse)))
    assert message.stop_reason == "error"
    assert "Upstream provider overloaded" in message.error_message
    assert message.text() == "Partial"


async def test_stalled_stream_hits_the_idle_timeout(sse):
    raw = (FIXTURES / "openai/completions_text.sse").read_bytes()
    sse.enqueue(Reply(parts=[raw[:700], STALL]))
    started = time.monotonic()
    message = final(await collect(stream(sse, idle_timeout_ms=300)))
    assert time.monotonic() - started < 3
    assert message.stop_reason == "error"
    assert "timed out" in message.error_message.lower()
    assert message.text()


async def test_abort_closes_the_stream_promptly(sse):
    raw = (FIXTURES / "openai/completions_text.sse").read_bytes()
    sse.enqueue(Reply(parts=[raw[:700], STALL]))
    controller = AbortController()
    events = []
    aborted_at = None

    async def consume():
        async for event in stream(sse, signal=controller.signal):
            events.append(event)

    task = asyncio.create_task(consume())
    while not any(e.type == "text_delta" for e in events):
        await asyncio.sleep(0.005)
    aborted_at = time.monotonic()
    controller.abort()
    await asyncio.wait_for(task, 2)
    elapsed = time.monotonic() - aborted_at
    assert elapsed < 0.1
    assert events[-1].type == "error" and events[-1].reason == "aborted"
    message = final(events)
    assert message.stop_reason == "aborted" and message.text()


async def test_abort_during_retry_sleep(sse):
    sse.enqueue(Reply.json(503, {"error": {"message": "busy"}}, headers={"retry-after": "30"}))
    controller = AbortController()
    task = asyncio.create_task(
        collect(stream(sse, signal=controller.signal, retry={"maxRetries": 1, "maxRetryDelayMs": 60000}))
    )
    while not sse.requests:
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.05)
    started = time.monotonic()
    controller.abort()
    events = await asyncio.wait_for(task, 2)
    assert time.monotonic() - started < 0.1
    assert final(events).stop_reason == "aborted"


async def test_missing_key_is_one_clear_error(sse):
    sse.enqueue(
        Reply.json(
            401, {"error": {"message": "You didn't provide an API key.", "type": "invalid_request_error"}}
        )
    )
    message = final(await collect(stream(sse, api_key=None)))
    assert "authorization" not in sse.last.headers
    assert "API key" in message.error_message
