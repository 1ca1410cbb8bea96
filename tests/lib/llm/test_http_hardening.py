"""The shared HTTP layer, for every API: redirects keep credentials at the configured origin,
timeouts honour ``httpIdleTimeoutMs`` and say which wait ran out, ``Retry-After`` is honoured up
to the configured maximum and refused beyond it, and a stream is closed before its last event is
handed on (no asynchronous generator is left for the event loop to finalise)."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

import pi_host
from pi_host.lib.llm.http import _same_origin, idle_timeout
from pi_host.protocol.failures import is_retryable_error, server_delay_note, server_retry_delay_ms
from tests.support.providers.adapters import API_NAMES, collect, final, stream
from tests.support.providers.sse import Reply, SSEServer
from tests.support.providers.wire import answer, silent, stalled, status

KEY = "sk-test-key"

# --- redirects ------------------------------------------------------------------------------------


@pytest.mark.parametrize("api", API_NAMES)
async def test_same_origin_redirect_is_followed_with_every_header(sse_server, api):
    sse_server.enqueue(Reply.redirect(f"{sse_server.url}/moved/here"), answer(api, "Moved fine"))
    message = final(await collect(api, sse_server.url, headers={"x-extra-token": "t-123"}))
    assert message.stop_reason == "stop" and message.text() == "Moved fine"
    first, second = sse_server.requests
    assert second.path == "/moved/here" and second.body == first.body
    assert {k: v for k, v in second.headers.items() if k != "host"} == {
        k: v for k, v in first.headers.items() if k != "host"
    }


@pytest.mark.parametrize("api", API_NAMES)
@pytest.mark.parametrize("code", [301, 307, 308])
async def test_cross_origin_redirect_is_refused_and_sends_nothing(sse_server, api, code):
    with SSEServer() as other:
        other.default = answer(api, "never")
        sse_server.enqueue(Reply.redirect(f"{other.url}/v1/steal", status=code))
        message = final(await collect(api, sse_server.url))
        assert other.requests == []
    assert message.stop_reason == "error"
    assert message.error_message.startswith(
        f"{code} redirect refused: {sse_server.url} sent the request on to"
    )
    assert not is_retryable_error(message)


def test_same_origin_rule():
    url = str  # the rule reads URL strings (both transports give them)
    assert _same_origin(url("http://a.test/v1"), url("http://a.test:80/v2"))
    assert _same_origin(url("http://a.test/v1"), url("https://a.test/v1"))  # an upgrade, like httpx
    assert not _same_origin(url("https://a.test/v1"), url("http://a.test/v1"))
    assert not _same_origin(url("http://a.test:8000/"), url("http://a.test:8001/"))
    assert not _same_origin(url("https://a.test/"), url("https://b.test/"))


async def test_redirect_loops_end(sse_server):
    sse_server.default = Reply.redirect(f"{sse_server.url}/again")
    message = final(await collect("openai-completions", sse_server.url))
    assert message.error_message == "307 too many redirects (more than 5)"
    assert len(sse_server.requests) == 6


# --- timeouts -------------------------------------------------------------------------------------


def test_idle_timeout_follows_pi_settings():
    from pi_host.protocol import StreamOptions

    def seconds(**fields):
        return idle_timeout(StreamOptions(**fields))

    assert seconds() == (300.0, "httpIdleTimeoutMs")
    assert seconds(idle_timeout_ms=1500) == (1.5, "httpIdleTimeoutMs")
    assert seconds(idle_timeout_ms=0)[0] is None
    assert seconds(idle_timeout_ms="disabled")[0] is None
    assert seconds(idle_timeout_ms=5000, retry={"timeoutMs": 2000}) == (2.0, "retry.provider.timeoutMs")
    assert seconds(idle_timeout_ms=0, retry={"timeoutMs": 2000}) == (2.0, "retry.provider.timeoutMs")


@pytest.mark.parametrize("api", API_NAMES)
async def test_a_server_that_never_answers_fails_after_the_idle_timeout(sse_server, api):
    sse_server.enqueue(silent())
    started = time.monotonic()
    message = final(await collect(api, sse_server.url, idle_timeout_ms=300))
    assert 0.25 < time.monotonic() - started < 2
    assert message.error_message == (
        "Request timed out: no response from the provider within 0.3s (httpIdleTimeoutMs)"
    )
    assert is_retryable_error(message)


@pytest.mark.parametrize("api", API_NAMES)
async def test_a_stream_that_stalls_says_so(sse_server, api):
    sse_server.enqueue(stalled(api))
    message = final(await collect(api, sse_server.url, idle_timeout_ms=300))
    assert message.error_message == (
        "Request timed out: the stream sent no data for 0.3s (idle timeout, httpIdleTimeoutMs)"
    )
    assert message.text()  # what streamed before the stall is kept


async def test_no_response_is_retried_by_the_provider_layer(sse_server):
    sse_server.enqueue(silent(), answer("openai-completions", "Second time lucky"))
    message = final(
        await collect(
            "openai-completions",
            sse_server.url,
            idle_timeout_ms=200,
            retry={"maxRetries": 1, "baseDelayMs": 10},
        )
    )
    assert message.text() == "Second time lucky" and len(sse_server.requests) == 2


async def test_disabled_timeout_waits(sse_server):
    sse_server.enqueue(Reply(before=0.4, parts=answer("openai-completions", "Slow but fine").parts))
    message = final(
        await collect("openai-completions", sse_server.url, idle_timeout_ms=0, retry={"timeoutMs": 0})
    )
    assert message.text() == "Slow but fine"


@pytest.mark.parametrize(
    ("value", "seconds"),
    [(None, 300.0), (0, None), ("disabled", None), (1500, 1.5), ("2500", 2.5), ("soon", 300.0)],
)
async def test_session_reads_http_idle_timeout_like_pi(isolated_environment, value, seconds):
    settings = {"retry": {"maxDelayMs": 7000}} if value is None else {"httpIdleTimeoutMs": value}
    session = await pi_host.create_session(model="anthropic/claude-haiku-4-5", settings=settings)
    try:
        options = session.bridge.stream_options()
    finally:
        await session.close()
    assert idle_timeout(options)[0] == seconds
    if value is None:  # pi's legacy name for the server-requested delay limit
        assert options.retry == {"maxRetryDelayMs": 7000}


# --- Retry-After ----------------------------------------------------------------------------------


def test_server_delay_notes_round_trip():
    assert server_retry_delay_ms(f"429 slow down {server_delay_note(250)}") == 300  # rounded up
    assert server_retry_delay_ms("429 slow down") is None
    long = f"429 slow down {server_delay_note(120_000, 60_000)}"
    assert long.endswith(
        "(the server asked to retry after 120s, longer than the 60s limit of retry.provider.maxRetryDelayMs)"
    )
    assert not is_retryable_error(long)  # the provider layer refused to wait: so does the session
    short = f"429 slow down {server_delay_note(30_000)}"
    assert is_retryable_error(short) and is_retryable_error(short, max_delay_ms=60_000)
    assert not is_retryable_error(short, max_delay_ms=10_000)  # longer than retry.maxAgentDelayMs


@pytest.mark.parametrize("api", API_NAMES)
async def test_provider_retry_waits_for_retry_after(sse_server, api):
    sse_server.enqueue(status(api, 429, {"retry-after-ms": "300"}), answer(api, "Patience pays"))
    started = time.monotonic()
    message = final(await collect(api, sse_server.url, retry={"maxRetries": 2, "baseDelayMs": 1}))
    assert time.monotonic() - started >= 0.3
    assert message.text() == "Patience pays" and len(sse_server.requests) == 2


@pytest.mark.parametrize("header", ["120", "Wed, 21 Oct 2099 07:28:00 GMT"])
async def test_a_long_retry_after_is_refused_at_once(sse_server, header):
    sse_server.enqueue(status("anthropic-messages", 429, {"retry-after": header}))
    started = time.monotonic()
    message = final(await collect("anthropic-messages", sse_server.url, retry={"maxRetries": 3}))
    assert time.monotonic() - started < 1 and len(sse_server.requests) == 1
    assert "longer than the 60s limit of retry.provider.maxRetryDelayMs" in message.error_message
    assert not is_retryable_error(message)


async def test_without_provider_retries_the_delay_is_left_to_the_session(sse_server):
    sse_server.enqueue(status("google-generative-ai", 503, {"retry-after": "2"}))
    message = final(await collect("google-generative-ai", sse_server.url))
    assert message.error_message.endswith("(the server asked to retry after 2s)")
    assert server_retry_delay_ms(message.error_message) == 2000 and is_retryable_error(message)


# --- closing ----------------------------------------------------------------------------------


@pytest.mark.parametrize("api", API_NAMES)
async def test_the_response_is_closed_before_the_last_event(sse_server, api):
    responses: list[httpx.Response] = []

    async def keep(response: httpx.Response) -> None:
        responses.append(response)

    sse_server.enqueue(answer(api, "Closed in time"))
    async with httpx.AsyncClient(event_hooks={"response": [keep]}) as client:
        async for event in stream(api, sse_server.url, client=client):
            if event.type in ("done", "error"):
                assert event.type == "done"
                assert responses and responses[-1].is_closed  # before the consumer has the end
                break  # the agent loop stops here too, without closing the stream


@pytest.mark.parametrize("api", API_NAMES)
def test_stopping_at_the_last_event_leaves_nothing_for_the_event_loop(api):
    """The CLI's pattern: one event loop per run, the consumer returns at ``done`` without
    closing the stream, then the loop shuts down. Nothing may be reported on the way."""
    problems: list[str] = []
    with SSEServer() as server:
        for _ in range(10):
            server.enqueue(status(api, 500), answer(api, "Fine"))

            async def run() -> None:
                asyncio.get_running_loop().set_exception_handler(
                    lambda _loop, ctx: problems.append(ctx["message"])
                )
                async for event in stream(api, server.url, retry={"maxRetries": 1, "baseDelayMs": 1}):
                    if event.type == "done":
                        return

            asyncio.run(run())
    assert problems == []
