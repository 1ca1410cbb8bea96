"""``after_provider_response`` and ``provider_stream_event`` for openai-completions,
openai-responses and google-generative-ai, the way the Anthropic adapter raises them: through the
``on_response`` / ``on_stream_event`` callbacks the session sets on ``StreamOptions``.

First each adapter on its own (the callback sees every decoded chunk of the recorded stream, in
order), then a whole session per API whose plugin implements the hooks (a tool round trip, so two
requests)."""

from __future__ import annotations

import json

import orjson
import pytest
from pi_provider_google.stream import stream_google
from pi_provider_openai.completions import stream_completions
from pi_provider_openai.responses import stream_responses

import pi_host
from pi_host import hookimpl
from tests.support.providers.demo import ANSWER, models_json
from tests.support.providers.openai_google import collect, context, final, make_model, options
from tests.support.providers.sse import FIXTURES, Reply

ADAPTERS = {
    "openai-completions": (stream_completions, "openai/completions_tools.sse", "/v1", "qwen3-coder"),
    "openai-responses": (stream_responses, "openai/responses_tools.sse", "/v1", "gpt-5-mini"),
    "google-generative-ai": (stream_google, "google/google_tools.sse", "/v1beta", "gemini-2.5-flash"),
}


def recorded_chunks(fixture: str) -> list[dict]:
    """The JSON payloads of a recorded stream (every fixture event is one ``data:`` line)."""
    raw = (FIXTURES / fixture).read_bytes().replace(b"\r\n", b"\n")
    lines = [line[5:].strip() for line in raw.split(b"\n") if line.startswith(b"data:")]
    return [orjson.loads(line) for line in lines if line != b"[DONE]"]


@pytest.mark.parametrize("api", list(ADAPTERS))
async def test_adapter_calls_on_response_and_on_stream_event(sse_server, api):
    stream, fixture, prefix, model_id = ADAPTERS[api]
    sse_server.enqueue(Reply.from_fixture(fixture, chunk_size=11))
    seen: dict[str, list] = {"chunks": [], "responses": []}

    async def on_stream_event(data):  # async, like the session's bridge
        seen["chunks"].append(data)

    def on_response(status, headers):  # sync callbacks work too
        seen["responses"].append((status, headers.get("content-type")))

    model = make_model(sse_server.url + prefix, api=api, id=model_id)
    hooks = {"on_stream_event": on_stream_event, "on_response": on_response}
    message = final(await collect(stream(model, context(), options(**hooks))))
    assert message.stop_reason == "toolUse", message.error_message
    assert seen["responses"] == [(200, "text/event-stream")]
    expected = recorded_chunks(fixture)
    assert len(expected) > 3
    assert seen["chunks"] == expected


@pytest.mark.parametrize("api", list(ADAPTERS))
async def test_no_listener_means_no_callback_and_same_result(sse_server, api):
    stream, fixture, prefix, model_id = ADAPTERS[api]
    sse_server.enqueue(Reply.from_fixture(fixture, chunk_size=64))
    model = make_model(sse_server.url + prefix, api=api, id=model_id)
    message = final(await collect(stream(model, context(), options())))
    assert message.stop_reason == "toolUse"


class ProviderHooks:
    __name__ = "test-provider-hooks-openai-google"

    def __init__(self):
        self.statuses: list[int] = []
        self.stream: list[tuple[str, str, str]] = []
        self.payloads: list[dict] = []

    @hookimpl
    def on_after_provider_response(self, event, ctx):
        self.statuses.append(event["status"])

    @hookimpl
    def on_provider_stream_event(self, event, ctx):
        self.stream.append((event["provider"], event["api"], event["model"]))
        self.payloads.append(event["data"])


SESSION_MODELS = {
    "openai-completions": ("loop-completions/demo-chat", "loop-completions", "demo-chat"),
    "openai-responses": ("loop-responses/demo-resp", "loop-responses", "demo-resp"),
    "google-generative-ai": ("loop-google/gemini-demo", "loop-google", "gemini-demo"),
}


@pytest.mark.parametrize("api", list(SESSION_MODELS))
async def test_session_hooks_reach_each_adapter(demo, isolated_environment, api):
    (isolated_environment["agent"] / "models.json").write_text(json.dumps(models_json(demo.url)))
    (isolated_environment["work"] / "notes.txt").write_text("hello from the real file\n")
    demo.requests.clear()
    spec, provider, model_id = SESSION_MODELS[api]
    hooks = ProviderHooks()
    session = await pi_host.create_session(model=spec, plugins=[hooks])
    try:
        await session.prompt("What does notes.txt say?")
    finally:
        await session.close()
    assert session.last_assistant().text() == ANSWER
    assert len(demo.requests) == 2
    assert hooks.statuses == [200, 200]
    assert set(hooks.stream) == {(provider, api, model_id)}
    # Raw provider chunks, not pi-host events: the vendor's own field names show through.
    marker = {
        "openai-completions": "choices",
        "openai-responses": "type",
        "google-generative-ai": "candidates",
    }[api]
    assert all(marker in payload for payload in hooks.payloads)
    assert len(hooks.payloads) >= 4
