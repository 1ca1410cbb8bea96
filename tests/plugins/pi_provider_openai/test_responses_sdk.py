"""The official ``openai`` SDK's Responses stream helper as a reference parser (test-only)."""

from __future__ import annotations

import json

import pytest
from pi_provider_openai.responses import stream_responses

from tests.support.lazy import LazyModule
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

openai = LazyModule("openai")


@pytest.mark.parametrize("chunk_size", [5, 17, 4096])
async def test_same_result_as_the_openai_sdk(sse, chunk_size):
    sse.enqueue(Reply.from_fixture("openai/responses_tools.sse", chunk_size=chunk_size))
    client = openai.AsyncOpenAI(api_key="sk-test", base_url=sse.url + "/v1", max_retries=0)
    async with client.responses.stream(model="gpt-5-mini", input="hi") as stream:
        response = await stream.get_final_response()
    await client.close()
    reasoning = [item for item in response.output if item.type == "reasoning"]
    calls = [item for item in response.output if item.type == "function_call"]

    sse.enqueue(Reply.from_fixture("openai/responses_tools.sse", chunk_size=chunk_size))
    model = make_model(
        sse.url + "/v1", api="openai-responses", provider="openai", id="gpt-5-mini", reasoning=True
    )
    message = final(await collect(stream_responses(model, context(), options(thinking_level="low"))))

    assert message.text() == response.output_text
    thinking = [b for b in message.content if b.type == "thinking"]
    assert [b.thinking for b in thinking] == ["\n\n".join(s.text for s in r.summary) for r in reasoning]
    assert [json.loads(b.thinking_signature)["encrypted_content"] for b in thinking] == [
        r.encrypted_content for r in reasoning
    ]
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls()] == [
        (f"{c.call_id}|{c.id}", c.name, json.loads(c.arguments)) for c in calls
    ]
    assert response.usage.input_tokens == message.usage.input + message.usage.cache_read
    assert response.usage.output_tokens == message.usage.output
