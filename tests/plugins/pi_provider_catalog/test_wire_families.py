"""One catalog provider per wire family, pointed at a loopback server through models.json: the
request goes to the family's path with the provider's key in the family's header, the body names
the catalog model, and a streamed answer with a tool call comes back as a tool call."""

from __future__ import annotations

import json

import pytest

from pi_host.config.models import ModelRegistry
from pi_host.plugins.selection import PluginRequest, load_plugins
from tests.support.providers.openai_google import (  # noqa: F401 - fixtures
    collect,
    context,
    final,
    module_server_fixture,
    options,
    sse_fixture,
)
from tests.support.providers.sse import Reply

# provider, model, env var, base path on the server, fixture, request path, key header
CASES = [
    ("mistral", "devstral-medium-latest", "MISTRAL_API_KEY", "", "openai/completions_tools.sse",
     "/v1/chat/completions", "authorization"),
    ("huggingface", "moonshotai/Kimi-K2.7-Code", "HF_TOKEN", "/v1", "openai/completions_tools.sse",
     "/v1/chat/completions", "authorization"),
    ("xai", "grok-4.7", "XAI_API_KEY", "/v1", "openai/responses_tools.sse", "/v1/responses", "authorization"),
    ("minimax", "MiniMax-M3", "MINIMAX_API_KEY", "/anthropic", "anthropic/anthropic_thinking_tool.sse",
     "/anthropic/v1/messages", "x-api-key"),
    ("opencode-go", "gemini-4-argon", "OPENCODE_API_KEY", "/v1beta", "google/google_tools.sse",
     "/v1beta/models/gemini-4-argon:streamGenerateContent", "x-goog-api-key"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
async def test_catalog_provider_request_shape_and_tool_call(case, sse, isolated_environment, monkeypatch):
    provider, model_id, env, prefix, fixture, path, key_header = case
    monkeypatch.setenv(env, "sk-loopback-test")
    agent = isolated_environment["agent"]
    (agent / "models.json").write_text(json.dumps({"providers": {provider: {"baseUrl": sse.url + prefix}}}))
    registry = ModelRegistry.from_plugins(load_plugins(PluginRequest(cwd=str(agent))).host)
    model = registry.find(provider, model_id)
    assert model is not None
    sse.enqueue(Reply.from_fixture(fixture, chunk_size=7))
    key = registry.get_api_key(provider)
    events = await collect(registry.stream_fn(model)(model, context(), options(api_key=key)))
    message = final(events)
    assert events[-1].type == "done", message.error_message
    assert message.stop_reason == "toolUse" and message.tool_calls()
    assert sse.last.path.split("?")[0] == path
    assert "sk-loopback-test" in sse.last.headers[key_header]
    body = sse.last.json
    if "model" in body:
        assert body["model"] == model_id
