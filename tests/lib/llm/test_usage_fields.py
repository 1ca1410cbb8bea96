"""Optional usage fields and request identity over real loopback servers (reference §1.4, §3).

pi 1.6.0 writes ``reasoning`` whenever an OpenAI (completions or responses) or Google usage
object is parsed (0 when absent), ``cacheWrite1h`` from every Anthropic ``message_start`` (0 when
absent; updated by deltas that carry it), ``reasoning`` on Anthropic only from a delta's
``output_tokens_details.thinking_tokens``, and ``cost.totalFromProvider`` (false) whenever a
usage is priced. OpenRouter's billed ``cost`` replaces the total and sets the flag true. Every
adapter identifies itself as pi-host in ``User-Agent``.
"""

from __future__ import annotations

import json

import pytest
from pi_provider_google.stream import stream_google
from pi_provider_openai.completions import stream_completions
from pi_provider_openai.responses import stream_responses

from pi_host._version import __version__
from tests.support.providers.anthropic import model_for, simple_context
from tests.support.providers.anthropic import run as run_anthropic
from tests.support.providers.openai_google import (  # noqa: F401 - fixtures
    collect,
    context,
    final,
    make_model,
    module_server_fixture,
    options,
    sse_fixture,
)
from tests.support.providers.sse import Reply


def sse(*events: dict, named: bool = False) -> bytes:
    out = []
    for event in events:
        head = f"event: {event['type']}\n" if named else ""
        out.append(f"{head}data: {json.dumps(event)}\n\n")
    return "".join(out).encode()


def completions_chunks(usage: dict | None) -> bytes:
    base = {"id": "c1", "object": "chat.completion.chunk", "model": "m"}
    text = {**base, "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": None}]}
    stop = {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    tail = [{**base, "choices": [], "usage": usage}] if usage is not None else []
    return sse(text, stop, *tail) + b"data: [DONE]\n\n"


def check_agent(request) -> None:
    agent = request.headers["user-agent"]
    assert agent.startswith(f"pi-host/{__version__} (") and "python/" in agent


async def test_completions_reasoning_flag_and_user_agent(sse):
    usage = {
        "prompt_tokens": 120,
        "completion_tokens": 40,
        "prompt_tokens_details": {"cached_tokens": 20},
        "completion_tokens_details": {"reasoning_tokens": 25},
    }
    sse.enqueue(Reply.sse(completions_chunks(usage), chunk_size=9))
    message = final(await collect(stream_completions(make_model(sse.url), context(), options())))
    data = message.to_json()["usage"]
    assert (data["input"], data["output"], data["cacheRead"], data["reasoning"]) == (100, 40, 20, 25)
    assert data["cost"]["totalFromProvider"] is False and "cacheWrite1h" not in data
    check_agent(sse.last)

    # No reasoning reported: pi still writes 0; no usage chunk at all: neither key.
    sse.enqueue(Reply.sse(completions_chunks({"prompt_tokens": 5, "completion_tokens": 2})))
    message = final(await collect(stream_completions(make_model(sse.url), context(), options())))
    assert message.to_json()["usage"]["reasoning"] == 0
    sse.enqueue(Reply.sse(completions_chunks(None)))
    data = final(await collect(stream_completions(make_model(sse.url), context(), options()))).to_json()
    assert "reasoning" not in data["usage"] and "totalFromProvider" not in data["usage"]["cost"]


@pytest.mark.parametrize(
    ("billing", "total"),
    [
        ({"cost": 0.0042, "is_byok": False}, 0.0042),
        ({"cost": 0.001, "is_byok": True, "cost_details": {"upstream_inference_cost": 0.01}}, 0.011),
        (
            {
                "cost": 0.001,
                "is_byok": True,
                "cost_details": {
                    "upstream_inference_cost": None,
                    "upstream_inference_prompt_cost": 0.002,
                    "upstream_inference_completions_cost": 0.003,
                },
            },
            0.006,
        ),
        ({"cost": 0.0042}, None),  # no is_byok: the catalog total stays
    ],
)
async def test_openrouter_billed_cost(sse, billing, total):
    usage = {"prompt_tokens": 1000, "completion_tokens": 100, **billing}
    sse.enqueue(Reply.sse(completions_chunks(usage)))
    model = make_model(sse.url, provider="openrouter")
    data = final(await collect(stream_completions(model, context(), options()))).to_json()["usage"]
    catalog = (1000 * 3 + 100 * 15) / 1e6
    assert data["cost"]["input"] == pytest.approx(1000 * 3 / 1e6)  # the parts stay priced
    assert data["cost"]["total"] == pytest.approx(total if total is not None else catalog)
    assert data["cost"]["totalFromProvider"] is (total is not None)


async def test_cost_on_another_provider_is_ignored(sse):
    usage = {"prompt_tokens": 1000, "completion_tokens": 100, "cost": 9, "is_byok": False}
    sse.enqueue(Reply.sse(completions_chunks(usage)))
    data = final(await collect(stream_completions(make_model(sse.url), context(), options()))).to_json()
    assert data["usage"]["cost"]["totalFromProvider"] is False
    assert data["usage"]["cost"]["total"] == pytest.approx((1000 * 3 + 100 * 15) / 1e6)


def responses_stream(usage: dict | None) -> bytes:
    response = {"id": "resp_1", "status": "completed", "output": []}
    if usage is not None:
        response["usage"] = usage
    item = {"type": "message", "id": "msg_1", "role": "assistant", "content": []}
    events = [
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.content_part.added", "item_id": "msg_1", "output_index": 0,
         "content_index": 0, "part": {"type": "output_text", "text": ""}},
        {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
         "content_index": 0, "delta": "hi"},
        {"type": "response.output_item.done", "output_index": 0,
         "item": {**item, "content": [{"type": "output_text", "text": "hi"}]}},
        {"type": "response.completed", "response": response},
    ]  # fmt: skip
    return sse(*events, named=True)


async def test_responses_reasoning_cache_write_flag_and_user_agent(sse):
    usage = {
        "input_tokens": 300,
        "output_tokens": 50,
        "total_tokens": 350,
        "input_tokens_details": {"cached_tokens": 100, "cache_write_tokens": 40},
        "output_tokens_details": {"reasoning_tokens": 30},
    }
    sse.enqueue(Reply.sse(responses_stream(usage), chunk_size=13))
    model = make_model(sse.url, api="openai-responses", provider="openai", id="gpt-5")
    data = final(await collect(stream_responses(model, context(), options()))).to_json()["usage"]
    assert (data["input"], data["cacheRead"], data["cacheWrite"], data["reasoning"]) == (160, 100, 40, 30)
    assert data["totalTokens"] == 350 and data["cost"]["totalFromProvider"] is False
    check_agent(sse.last)

    sse.enqueue(Reply.sse(responses_stream(None)))
    data = final(await collect(stream_responses(model, context(), options()))).to_json()["usage"]
    assert "reasoning" not in data and data["cost"]["totalFromProvider"] is False


async def test_google_reasoning_flag_and_user_agent(sse):
    chunk = {
        "candidates": [{"content": {"role": "model", "parts": [{"text": "hi"}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 5, "totalTokenCount": 55},
    }
    sse.enqueue(Reply.sse(f"data: {json.dumps(chunk)}\r\n\r\n"))
    model = make_model(sse.url, api="google-generative-ai", provider="google", id="gemini-2.5-flash")
    data = final(await collect(stream_google(model, context(), options()))).to_json()["usage"]
    assert data["reasoning"] == 0 and data["cost"]["totalFromProvider"] is False
    check_agent(sse.last)
    assert sse.last.headers["x-goog-api-key"] == "sk-test-key"


def anthropic_stream(start_usage: dict, delta_usage: dict) -> bytes:
    return sse(
        {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
         "model": "claude-sonnet-4-5", "content": [], "usage": start_usage}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": delta_usage},
        {"type": "message_stop"},
        named=True,
    )  # fmt: skip


async def test_anthropic_one_hour_cache_writes_and_thinking_tokens(sse):
    start = {
        "input_tokens": 10,
        "output_tokens": 1,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 1000,
        "cache_creation": {"ephemeral_5m_input_tokens": 400, "ephemeral_1h_input_tokens": 600},
    }
    delta = {"output_tokens": 80, "output_tokens_details": {"thinking_tokens": 50}}
    sse.enqueue(Reply.sse(anthropic_stream(start, delta), chunk_size=17))
    events = await run_anthropic(model_for(sse.url), simple_context())
    data = events[-1].message.to_json()["usage"]
    assert (data["cacheWrite"], data["cacheWrite1h"], data["output"], data["reasoning"]) == (
        1000,
        600,
        80,
        50,
    )
    # 1-hour writes cost twice the input price; the rest the cache-write price.
    assert data["cost"]["cacheWrite"] == pytest.approx((400 * 3.75 + 600 * 3 * 2) / 1e6)
    assert data["cost"]["totalFromProvider"] is False

    sse.enqueue(Reply.sse(anthropic_stream({"input_tokens": 10, "output_tokens": 1}, {"output_tokens": 3})))
    events = await run_anthropic(model_for(sse.url), simple_context())
    data = events[-1].message.to_json()["usage"]
    assert data["cacheWrite1h"] == 0 and "reasoning" not in data
    check_agent(sse.last)
