"""Azure OpenAI and Cloudflare (Workers AI, AI Gateway) as pi 1.6.0 configures them, against a
loopback server: the endpoint (placeholders filled from auth.json ``env`` or the environment,
Azure's base URL, deployment and ``api-version``), the key header, and a streamed answer with a
tool call through the provider's wire API."""

from __future__ import annotations

import json

import pytest
from pi_provider_catalog import endpoints

from pi_host.config.models import ModelRegistry
from pi_host.plugins.selection import PluginRequest, load_plugins
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

KEY = "sk-loopback-cloud-key-1234"


def registry_for(agent, auth=None):
    if auth is not None:
        (agent / "auth.json").write_text(json.dumps(auth))
    return ModelRegistry.from_plugins(load_plugins(PluginRequest(cwd=str(agent))).host)


async def run(registry, model, **fields):
    key = registry.get_api_key(model.provider)
    return await collect(registry.stream_fn(model)(model, context(), options(api_key=key, **fields)))


def assert_tool_call(events):
    message = final(events)
    assert events[-1].type == "done", message.error_message
    assert message.stop_reason == "toolUse" and message.tool_calls()
    return message


# --- Azure OpenAI ----------------------------------------------------------------------------------


async def test_azure_responses_deployment_api_version_and_key(sse, isolated_environment, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    monkeypatch.setenv("AZURE_OPENAI_BASE_URL", sse.url + "/openai/v1")
    monkeypatch.setenv("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "gpt-6.2-sol=team-sol, other=x")
    monkeypatch.setenv("AZURE_OPENAI_API_VERSION", "2025-04-01-preview")
    registry = registry_for(isolated_environment["agent"])
    model = registry.find("azure", "gpt-6.2-sol")
    assert model.api == "azure-openai-responses"
    sse.enqueue(Reply.from_fixture("openai/responses_tools.sse", chunk_size=9))
    message = assert_tool_call(await run(registry, model))
    assert message.model == "gpt-6.2-sol" and message.api == "azure-openai-responses"
    request = sse.last
    assert request.path == "/openai/v1/responses?api-version=2025-04-01-preview"
    assert request.headers["api-key"] == KEY and "authorization" not in request.headers
    body = request.json
    assert body["model"] == "team-sol" and body["stream"] is True and body["store"] is False
    assert [t["name"] for t in body["tools"]] == ["read", "bash"]


async def test_azure_resource_name_entra_token_and_foundry_completions(
    sse, isolated_environment, monkeypatch
):
    token = "eyJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJjb2duaXRpdmUifQ.c2lnbmF0dXJlLXZhbHVl"
    registry = registry_for(isolated_environment["agent"], {"azure": {"type": "api_key", "key": token}})
    model = registry.find("azure", "gpt-6.2-sol")
    # The resource name makes the standard endpoint; a resource root on an Azure host gets /openai/v1.
    monkeypatch.setenv("AZURE_OPENAI_RESOURCE_NAME", "my-res")
    assert endpoints.azure_base_url(model, options()) == "https://my-res.openai.azure.com/openai/v1"
    monkeypatch.setenv("AZURE_OPENAI_BASE_URL", "https://x.cognitiveservices.azure.com/")
    assert endpoints.azure_base_url(model, options()) == "https://x.cognitiveservices.azure.com/openai/v1"
    # An Entra ID token is a bearer token; the default api-version is v1.
    monkeypatch.setenv("AZURE_OPENAI_BASE_URL", sse.url + "/openai/v1")
    sse.enqueue(Reply.from_fixture("openai/responses_tools.sse"))
    assert_tool_call(await run(registry, model))
    assert sse.last.path == "/openai/v1/responses?api-version=v1"
    assert sse.last.headers["authorization"] == f"Bearer {token}" and "api-key" not in sse.last.headers
    assert sse.last.json["model"] == "gpt-6.2-sol"
    # A Foundry model on chat completions: the deployment is the body's model, the answer keeps the id.
    monkeypatch.setenv("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "deepseek-v4-pro=my-deepseek")
    foundry = registry.find("azure", "deepseek-v4-pro")
    assert foundry.api == "openai-completions"
    sse.enqueue(Reply.from_fixture("openai/completions_tools.sse", chunk_size=11))
    message = assert_tool_call(await run(registry, foundry))
    assert message.model == "deepseek-v4-pro"
    assert sse.last.path == "/openai/v1/chat/completions" and sse.last.json["model"] == "my-deepseek"


async def test_azure_without_an_endpoint_fails_in_one_error_event(isolated_environment, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    registry = registry_for(isolated_environment["agent"])
    model = registry.find("azure", "gpt-6.2-sol")
    events = await run(registry, model)
    assert [e.type for e in events] == ["error"]
    assert "AZURE_OPENAI_BASE_URL" in events[0].error.error_message


# --- Cloudflare -----------------------------------------------------------------------------------


async def test_workers_ai_account_id_from_auth_json_env(sse, isolated_environment):
    auth = {
        "cloudflare-workers-ai": {"type": "api_key", "key": KEY, "env": {"CLOUDFLARE_ACCOUNT_ID": "acct42"}}
    }
    registry = registry_for(isolated_environment["agent"], auth)
    model = registry.find("cloudflare-workers-ai", "@cf/moonshotai/kimi-k2.7-code")
    assert "{CLOUDFLARE_ACCOUNT_ID}" in model.base_url
    model = model.model_copy(
        update={"base_url": model.base_url.replace("https://api.cloudflare.com", sse.url)}
    )
    sse.enqueue(Reply.from_fixture("openai/completions_tools.sse", chunk_size=5))
    assert_tool_call(await run(registry, model))
    assert sse.last.path == "/client/v4/accounts/acct42/ai/v1/chat/completions"
    assert sse.last.headers["authorization"] == f"Bearer {KEY}"
    assert sse.last.json["model"] == "@cf/moonshotai/kimi-k2.7-code"


@pytest.mark.parametrize(
    ("model_id", "fixture", "path"),
    [
        ("claude-fable-5", "anthropic/anthropic_thinking_tool.sse", "/v1/acct7/gw1/anthropic/v1/messages"),
        ("gpt-4.1", "openai/responses_tools.sse", "/v1/acct7/gw1/openai/responses"),
        (
            "workers-ai/@cf/deepseek-ai/deepseek-v4-pro-0813",
            "openai/completions_tools.sse",
            "/v1/acct7/gw1/compat/chat/completions",
        ),
    ],
    ids=["anthropic", "responses", "compat"],
)
async def test_ai_gateway_placeholders_and_gateway_auth(
    model_id, fixture, path, sse, isolated_environment, monkeypatch
):
    monkeypatch.setenv("CLOUDFLARE_API_KEY", KEY)
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", "acct7")
    auth = {
        "cloudflare-ai-gateway": {
            "type": "api_key",
            "key": "$CLOUDFLARE_API_KEY",
            "env": {"CLOUDFLARE_GATEWAY_ID": "gw1"},
        }
    }
    registry = registry_for(isolated_environment["agent"], auth)
    model = registry.find("cloudflare-ai-gateway", model_id)
    model = model.model_copy(
        update={"base_url": model.base_url.replace("https://gateway.ai.cloudflare.com", sse.url)}
    )
    sse.enqueue(Reply.from_fixture(fixture, chunk_size=13))
    assert_tool_call(await run(registry, model))
    assert sse.last.path == path
    headers = sse.last.headers
    assert headers["cf-aig-authorization"] == f"Bearer {KEY}"
    assert "authorization" not in headers and "x-api-key" not in headers


async def test_missing_gateway_id_is_named(isolated_environment, monkeypatch):
    monkeypatch.setenv("CLOUDFLARE_API_KEY", KEY)
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", "acct7")
    registry = registry_for(isolated_environment["agent"])
    model = registry.find("cloudflare-ai-gateway", "gpt-4.1")
    events = await run(registry, model)
    assert [e.type for e in events] == ["error"]
    assert "CLOUDFLARE_GATEWAY_ID" in events[0].error.error_message
