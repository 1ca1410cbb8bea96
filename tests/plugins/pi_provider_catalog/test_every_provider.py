"""Every provider of pi 1.6.0's catalog, on every wire API its models use, against one loopback
server: pi-host's request must match the request pi 1.6.0 sent for the same provider and model
(recorded by ``python -m tests.support.providers.pi_requests``: path, the key's header and format,
the provider's own headers, and every body field that is not the prompt or the tool set — model
id, max_tokens vs max_completion_tokens, store, stream options, reasoning fields), and a streamed
answer in the API's format must come back as a tool call.

Not here, with the reason: see ``NOT_RECORDED`` (openai-codex is login-only and checked with a
stored login in tests/config/test_oauth_flows.py; radius speaks pi-messages and is compared
with pi 1.6.0's own recorded requests in tests/e2e/providers/test_radius_cli.py).
amazon-bedrock is checked on its own below: pi's AWS SDK speaks HTTP/2 to a plain-HTTP endpoint,
so its request cannot be recorded by an HTTP/1.1 loopback server; the shape is AWS's documented
ConverseStream one (test_bedrock.py has the SigV4 known-answer vector)."""

from __future__ import annotations

import json

import pytest

from pi_host.config.models import ModelRegistry
from pi_host.plugins.selection import PluginRequest, load_plugins
from tests.support.providers import eventstream
from tests.support.providers.openai_google import (  # noqa: F401 - fixtures
    BASH_TOOL,
    READ_TOOL,
    collect,
    context,
    final,
    module_server_fixture,
    options,
    sse_fixture,
)
from tests.support.providers.pi_requests import KEY, NOT_RECORDED, base_url, environment, load, shape
from tests.support.providers.sse import Reply

RECORDED = load()
CASES = sorted(k for k, v in RECORDED.items() if v["method"] == "POST")
TOOL_REPLY = {
    "openai-completions": "openai/completions_tools.sse",
    "mistral-conversations": "openai/completions_tools.sse",
    "openai-responses": "openai/responses_tools.sse",
    "azure-openai-responses": "openai/responses_tools.sse",
    "anthropic-messages": "anthropic/anthropic_thinking_tool.sse",
    "google-generative-ai": "google/google_tools.sse",
    "google-vertex": "google/google_tools.sse",
}
MAX_TOKENS = {"max_tokens", "max_completion_tokens", "max_output_tokens", "generationConfig"}
# Cases where pi-host's request differs from pi's on purpose or by a gap docs/providers.md names:
# ``{case: (differing fields, why)}``. A fixed gap fails the test until its entry goes.
KNOWN: dict[str, tuple[tuple[str, ...], str]] = {}
# pi's built-in read and bash tools ask for strict (constrained) sampling where the model has it;
# the request's tool settings (Gemini's VALIDATED mode, strict Responses tools) depend on that.
PREFER_STRICT = {"type": "json_schema", "strict": "prefer"}
PI_TOOLS = [t.model_copy(update={"constrained_sampling": PREFER_STRICT}) for t in (READ_TOOL, BASH_TOOL)]
# Environment that would give a provider a credential or endpoint it was not given in the case.
AMBIENT = ("AWS_", "AZURE_", "GOOGLE_", "GCLOUD_", "CLOUDFLARE_", "COPILOT_", "HF_TOKEN")


@pytest.fixture
def clean_env(monkeypatch, isolated_environment):
    import os

    for name in list(os.environ):
        if name.startswith(AMBIENT):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # never ask an instance endpoint
    home = isolated_environment["home"]
    monkeypatch.setenv("AWS_CONFIG_FILE", str(home / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(home / "aws-credentials"))
    return isolated_environment


@pytest.fixture(scope="module")
def registry(module_server, tmp_path_factory):
    """One registry for the module (loading 42 catalogs costs ~0.2 s) with every provider but
    Azure (whose endpoint comes from AZURE_OPENAI_BASE_URL) pointed at the server; keys are read
    from the environment at request time, so each test sets only its provider's."""
    from tests.support.providers.pi_requests import CATALOG

    agent = tmp_path_factory.mktemp("agent")
    overrides = {}
    for path in CATALOG.glob("*.json"):
        url = base_url(path.stem, module_server.url)
        if url is not None:
            overrides[path.stem] = {"baseUrl": url}
    (agent / "models.json").write_text(json.dumps({"providers": overrides}))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PI_CODING_AGENT_DIR", str(agent))
        return ModelRegistry.from_plugins(load_plugins(PluginRequest(cwd=str(agent))).host)


def test_every_catalog_provider_is_covered_or_skipped_with_a_reason():
    import glob
    from pathlib import Path

    from tests.support.providers.pi_requests import CATALOG

    providers = {Path(p).stem for p in glob.glob(str(CATALOG / "*.json"))}
    covered = {RECORDED[k]["provider"] for k in CASES} | {"amazon-bedrock"}
    assert len(providers) == 42
    assert providers - covered == set(NOT_RECORDED)


@pytest.mark.parametrize("case", CASES)
async def test_request_matches_pi_and_a_tool_call_streams_back(case, sse, registry, clean_env, monkeypatch):
    pi = RECORDED[case]
    provider, api, model_id = pi["provider"], pi["api"], pi["model"]
    for name, value in environment(provider, sse.url).items():
        monkeypatch.setenv(name, value)
    model = registry.find(provider, model_id)
    assert model is not None and model.api == api
    sse.enqueue(Reply.from_fixture(TOOL_REPLY[api], chunk_size=11))
    key = registry.get_api_key(provider)
    events = await collect(
        registry.stream_fn(model)(
            model, context(tools=PI_TOOLS), options(api_key=key, thinking_level="high", session_id="s1")
        )
    )
    message = final(events)
    assert events[-1].type == "done", message.error_message
    assert message.stop_reason == "toolUse" and message.tool_calls()
    assert message.provider == provider and message.model == model_id
    sent = sse.requests[0]
    mine = shape(sent.method, sent.path, sent.headers, sent.json)
    found = differences(mine, pi)
    known, _reason = KNOWN.get(case, ((), ""))
    assert sorted(found) == sorted(known), found


def differences(mine, pi):
    """What pi-host sent differently from pi, as ``{where: (pi-host, pi)}``."""
    out = {}
    # Anthropic's SDK marks its beta client with ?beta=true; the endpoint is the same.
    path = pi["path"].replace("?beta=true", "")
    if (mine["method"], mine["path"]) != (pi["method"], path):
        out["path"] = (mine["path"], pi["path"])
    for part in ("headers", "fields"):
        for name in sorted(set(mine[part]) | set(pi[part])):
            if name in MAX_TOKENS and part == "fields" and name in mine[part] and name in pi[part]:
                continue  # the value is clamped to the window left by the prompt, which differs
            if mine[part].get(name) != pi[part].get(name):
                out[f"{part}.{name}"] = (mine[part].get(name), pi[part].get(name))
    if set(mine["keys"]) != set(pi["keys"]):
        out["keys"] = (
            sorted(set(mine["keys"]) - set(pi["keys"])),
            sorted(set(pi["keys"]) - set(mine["keys"])),
        )
    return out


async def test_amazon_bedrock_converse_stream(sse, registry, clean_env, monkeypatch):
    from pi_provider_bedrock import auth

    auth._sessions.clear()
    for name, value in environment("amazon-bedrock", sse.url).items():
        monkeypatch.setenv(name, value)
    model = registry.find("amazon-bedrock", "us.anthropic.claude-opus-5-5")
    raw = eventstream.converse_tool_call_stream()
    sse.enqueue(Reply(headers={"content-type": "application/vnd.amazon.eventstream"}, parts=[raw]))
    key = registry.get_api_key("amazon-bedrock")
    events = await collect(
        registry.stream_fn(model)(model, context(), options(api_key=key, thinking_level="high"))
    )
    message = final(events)
    assert message.stop_reason == "toolUse" and message.tool_calls(), message.error_message
    request = sse.last
    assert request.path == "/model/us.anthropic.claude-opus-5-5/converse-stream"
    assert request.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDLOOPBACKTEST/")
    assert "/eu-west-1/bedrock/aws4_request" in request.headers["authorization"]
    body = request.json
    assert set(body) >= {"messages", "system", "toolConfig", "inferenceConfig"}
    assert body["inferenceConfig"]["maxTokens"] == model.max_tokens
    assert KEY not in json.dumps(body)
