"""The first request pi 1.6.0 sends for every provider of its catalog, recorded against a loopback
server, so pi-host's request can be compared field by field (tests/plugins/pi_provider_catalog/
test_every_provider.py).

``python -m tests.support.providers.pi_requests`` runs ``pi -p`` once per (provider, wire API)
pair of the catalog, with the provider's base URL pointed at a loopback server through
models.json (or the variables the provider reads its endpoint from) and a fake key in the
provider's own variable, answers every request with a 400 (pi does not retry it), and writes
:data:`RECORDED`: the path, the headers that carry the key or name the client, and the parts of
the body that do not depend on the prompt or the tool set (the messages, tools and system prompt
of pi and pi-host differ by design). No key is real and nothing leaves the machine.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.support.paths import PROVIDER_FIXTURES, REPO

RECORDED = PROVIDER_FIXTURES / "pi_requests_1.6.0.json"
CATALOG = REPO / "plugins/pi_provider_catalog/catalog"
KEY = "sk-loopback-every-provider-0123"

NOT_RECORDED = {
    "openai-codex": "login only (ChatGPT plan); its request shape and streamed tool call are checked "
    "with a stored login in tests/config/test_oauth_flows.py",
    "radius": "its pi-messages wire API is not implemented in pi-host (docs/providers.md, Known gaps)",
}

# Body keys whose value is the prompt, the tools or the session, not the provider's shape.
CONTENT_KEYS = {
    "messages", "input", "contents", "system", "system_instruction", "systemInstruction", "tools",
    "toolConfig", "instructions", "prompt_cache_key", "metadata", "tool_choice", "inputs",
}  # fmt: skip
# Headers that carry the key or are set by the provider's configuration (not by the HTTP client).
HEADERS = (
    "authorization", "x-api-key", "api-key", "x-goog-api-key", "cf-aig-authorization",
    "anthropic-version", "copilot-integration-id", "editor-version", "editor-plugin-version",
    "x-initiator", "openai-intent", "chatgpt-account-id", "x-amz-security-token",
)  # fmt: skip


def cases() -> list[tuple[str, str, str]]:
    """(provider, api, model): the provider's default model on its main API, and for every other
    API the provider's models use, the first model of that API (reasoning models first)."""
    out = []
    for path in sorted(CATALOG.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data["id"] in NOT_RECORDED:
            continue
        by_api: dict[str, list[dict[str, Any]]] = {}
        for model in data["models"]:
            by_api.setdefault(model.get("api", data["api"]), []).append(model)
        for api, models in sorted(by_api.items()):
            ids = [m["id"] for m in models]
            if data.get("defaultModel") in ids:
                chosen = data["defaultModel"]
            else:
                chosen = sorted(models, key=lambda m: (not m.get("reasoning"), m["id"]))[0]["id"]
            out.append((data["id"], api, chosen))
    return out


def environment(provider: str, url: str) -> dict[str, str]:
    """The variables that give ``provider`` a key (and, for the cloud ones, an endpoint) here."""
    data = json.loads((CATALOG / f"{provider}.json").read_text(encoding="utf-8"))
    env = {name: KEY for name in data["envKeys"][-1:]}
    if provider == "anthropic":
        env = {"ANTHROPIC_API_KEY": KEY}
    if provider == "azure":
        env["AZURE_OPENAI_BASE_URL"] = url + "/openai/v1"
    if provider.startswith("cloudflare"):
        env.update(CLOUDFLARE_ACCOUNT_ID="acct7", CLOUDFLARE_GATEWAY_ID="gw1")
    if provider == "amazon-bedrock":
        env.update(
            AWS_ACCESS_KEY_ID="AKIDLOOPBACKTEST",
            AWS_SECRET_ACCESS_KEY="loopback-secret",
            AWS_REGION="eu-west-1",
        )
    if provider == "google-vertex":
        env["GOOGLE_CLOUD_LOCATION"] = "us-central1"
    return env


def base_url(provider: str, url: str) -> str | None:
    """The models.json ``baseUrl`` that points ``provider`` at the server (None: set by env)."""
    if provider == "azure":
        return None
    return url


def shape(method: str, path: str, headers: dict[str, str], body: Any) -> dict[str, Any]:
    kept = {name: headers[name] for name in HEADERS if name in headers}
    if isinstance(body, dict):
        fields = {k: v for k, v in body.items() if k not in CONTENT_KEYS}
        keys = sorted(body)
    else:
        fields, keys = {}, []
    return {"method": method, "path": path, "headers": kept, "keys": keys, "fields": fields}


def record() -> dict[str, Any]:
    from tests.support.pi_node import find_pi, pi_env
    from tests.support.providers.sse import Reply, SSEServer

    pi = find_pi()
    assert pi, "pi 1.6.0 is not installed (tests/support/pi_node.py)"
    node, cli = pi
    import subprocess

    results: dict[str, Any] = {}
    with SSEServer() as server, tempfile.TemporaryDirectory() as tmp:
        server.default = Reply.json(400, {"error": {"message": "recorded", "type": "invalid_request_error"}})
        for provider, api, model in cases():
            agent = Path(tmp, provider + "-" + api)
            agent.mkdir()
            override = base_url(provider, server.url)
            if override is not None:
                models = {"providers": {provider: {"baseUrl": override}}}
                (agent / "models.json").write_text(json.dumps(models))
            env = {
                k: v for k, v in pi_env(str(agent)).items() if not k.startswith(("AWS_", "AZURE_", "GOOGLE_"))
            }
            env.update(environment(provider, server.url), HOME=str(agent))
            before = len(server.requests)
            subprocess.run(
                [
                    node,
                    cli,
                    "-p",
                    "--no-session",
                    "--model",
                    f"{provider}/{model}",
                    "--thinking",
                    "high",
                    "Read main.py",
                ],
                cwd=str(agent),
                env=env,
                capture_output=True,
                timeout=60,
            )
            if len(server.requests) == before:
                print("no request:", provider, api, model, file=sys.stderr)
                continue
            sent = server.requests[before]
            results[f"{provider}|{api}"] = {
                "provider": provider,
                "api": api,
                "model": model,
                **shape(sent.method, sent.path, sent.headers, sent.json),
            }
            print(provider, api, model, sent.path, file=sys.stderr)
    return results


def load() -> dict[str, Any]:
    return json.loads(RECORDED.read_text(encoding="utf-8"))


if __name__ == "__main__":
    os.environ.pop("PI_CODING_AGENT_DIR", None)
    data = record()
    RECORDED.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print("recorded", len(data), "requests to", RECORDED)
