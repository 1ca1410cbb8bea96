"""anthropic-messages failure paths: dropped connection, malformed chunk, stall, abort, early end."""

from __future__ import annotations

import asyncio
import time

from pi_provider_anthropic.stream import stream

from pi_host.protocol import StreamOptions
from pi_host.protocol.abort import AbortController
from pi_host.protocol.failures import is_retryable_error
from tests.support.providers.anthropic import model_for, run, simple_context
from tests.support.providers.sse import DROP, FIXTURES, STALL, Reply

TEXT = (FIXTURES / "anthropic" / "anthropic_text.sse").read_bytes()
HEAD = TEXT[: TEXT.index(b"event: content_block_stop")]


async def test_connection_dropped_mid_stream(sse_server):
    sse_server.enqueue(Reply(parts=[HEAD, DROP]))
    events = await run(model_for(sse_server.url), simple_context())
    assert events[-1].type == "error"
    error = events[-1].error
    assert error.stop_reason == "error"
    assert error.text() == "Héllo wörld ☃ 日本語 🎉!"
    assert error.error_message.startswith("Connection lost")
    assert is_retryable_error(error)


async def test_stream_closed_before_message_stop(sse_server):
    sse_server.enqueue(Reply.sse(HEAD))
    events = await run(model_for(sse_server.url), simple_context())
    assert events[-1].type == "error"
    assert "ended before message_stop" in events[-1].error.error_message
    assert is_retryable_error(events[-1].error)


async def test_malformed_chunk_ends_with_error(sse_server):
    sse_server.enqueue(
        Reply.sse(HEAD + b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,\n\n')
    )
    events = await run(model_for(sse_server.url), simple_context())
    assert [e.type for e in events][-1] == "error"
    assert events[-1].error.error_message.startswith("Malformed stream data")
    assert events[-1].error.text().startswith("Héllo")


async def test_stalled_stream_hits_idle_timeout(sse_server):
    sse_server.enqueue(Reply(parts=[HEAD, STALL]))
    options = StreamOptions(api_key="k", idle_timeout_ms=300)
    started = time.monotonic()
    events = await run(model_for(sse_server.url), simple_context(), options)
    assert 0.25 < time.monotonic() - started < 3
    assert events[-1].type == "error"
    assert "idle timeout" in events[-1].error.error_message
    assert is_retryable_error(events[-1].error)


async def test_abort_closes_the_stream_promptly(sse_server):
    sse_server.enqueue(Reply(parts=[HEAD, STALL]))
    controller = AbortController()
    options = StreamOptions(api_key="k", signal=controller.signal)
    events = []
    aborted_at = None

    async def consume():
        async for event in stream(model_for(sse_server.url), simple_context(), options):
            events.append(event)

    task = asyncio.create_task(consume())
    while not any(e.type == "text_delta" for e in events):
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    aborted_at = time.monotonic()
    controller.abort()
    await asyncio.wait_for(task, 2)
    elapsed = time.monotonic() - aborted_at
    assert elapsed < 0.1
    assert events[-1].type == "error" and events[-1].reason == "aborted"
    assert events[-1].error.stop_reason == "aborted"
    assert events[-1].error.text().startswith("Héllo")


async def test_abort_before_start_yields_aborted_error(sse_server):
    controller = AbortController()
    controller.abort()
    events = await run(
        model_for(sse_server.url), simple_context(), StreamOptions(api_key="k", signal=controller.signal)
    )
    assert [e.type for e in events] == ["error"] and events[0].reason == "aborted"
    assert sse_server.requests == []


async def test_task_cancellation_closes_response(sse_server):
    """The agent loop cancels its stream task on abort: the generator must close cleanly."""
    sse_server.enqueue(Reply(parts=[HEAD, STALL]))
    seen = []

    async def consume():
        async for event in stream(model_for(sse_server.url), simple_context(), StreamOptions(api_key="k")):
            seen.append(event)

    task = asyncio.create_task(consume())
    while not seen:
        await asyncio.sleep(0.01)
    task.cancel()
    started = time.monotonic()
    try:
        await task
    except asyncio.CancelledError:
        pass
    assert time.monotonic() - started < 0.1


async def test_connection_refused_is_a_clear_error():
    events = await run(model_for("http://127.0.0.1:9"), simple_context())
    assert [e.type for e in events] == ["error"]
    assert events[0].error.error_message.startswith("Connection error")
