"""The official ``openai`` SDK as a reference parser (test-only): the same recorded bytes, parsed
by the SDK's chat-completions stream helper and by our adapter, give the same final text,
thinking and tool calls."""

from __future__ import annotations

import json

import pytest
from pi_provider_openai.completions import stream_completions

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

TOOLS = [
    {"type": "function", "function": {"name": "read", "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {"name": "bash", "parameters": {"type": "object", "properties": {}}}},
]


async def sdk_parse(url: str) -> tuple[str, str, list[tuple[str, str, dict]], str | None]:
    client = openai.AsyncOpenAI(api_key="sk-test", base_url=url, max_retries=0)
    reasoning: list[str] = []
    async with client.chat.completions.stream(
        model="m", messages=[{"role": "user", "content": "hi"}], tools=TOOLS
    ) as stream:
        async for event in stream:
            if event.type == "chunk" and event.chunk.choices:
                extra = event.chunk.choices[0].delta.model_extra or {}
                for field in ("reasoning_content", "reasoning", "reasoning_text"):
                    if extra.get(field):
                        reasoning.append(extra[field])
                        break
        completion = await stream.get_final_completion()
    await client.close()
    choice = completion.choices[0]
    calls = [
        (c.id, c.function.name, json.loads(c.function.arguments)) for c in choice.message.tool_calls or ()
    ]
    return choice.message.content or "", "".join(reasoning), calls, choice.finish_reason


@pytest.mark.parametrize(
    "fixture", ["completions_text.sse", "completions_tools.sse", "completions_tools_reasoning_field.sse"]
)
@pytest.mark.parametrize("chunk_size", [5, 64])
async def test_same_result_as_the_openai_sdk(sse, fixture, chunk_size):
    sse.enqueue(Reply.from_fixture(f"openai/{fixture}", chunk_size=chunk_size))
    text, reasoning, calls, finish = await sdk_parse(sse.url + "/v1")

    sse.enqueue(Reply.from_fixture(f"openai/{fixture}", chunk_size=chunk_size))
    message = final(await collect(stream_completions(make_model(sse.url + "/v1"), context(), options())))

    assert message.text() == text
    assert "".join(b.thinking for b in message.content if b.type == "thinking") == reasoning
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls()] == calls
    assert message.raw_stop_reason == finish
    assert text or calls  # the fixture had something to compare
