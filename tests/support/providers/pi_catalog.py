"""pi 1.6.0's built-in model catalog as data: regenerating pi-host's copy and listing pi's models.

``python -m tests.support.providers.pi_catalog`` rewrites ``plugins/pi_provider_catalog/catalog/``
from the JSON data files pi-ai 1.6.0 ships (``pi-ai/dist/providers/data/*.json``) plus the provider
facts (display name, key variables, default model, preference order) read from its bundle. Only
facts are carried over: ids, URLs, prices, windows, compat flags and thinking maps.
"""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support.paths import REPO

PI_AI = REPO / ".tools/pi/node_modules/@earendil-works/pi-ai/dist"
PI_AGENT = REPO / ".tools/pi/node_modules/@earendil-works/pi-coding-agent/dist"
OUT = REPO / "plugins/pi_provider_catalog/catalog"
INDEX = REPO / "plugins/pi_provider_catalog/catalog_index.json"
RECORDED_LISTING = REPO / "tests/fixtures/providers/pi_list_models_1.6.0.txt"

# The variables pi 1.6.0 reads a key from, per provider (pi-ai env-api-keys), in order.
ENV_KEYS: dict[str, list[str]] = {
    "anthropic": ["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"],
    "github-copilot": ["COPILOT_GITHUB_TOKEN"],
    "ant-ling": ["ANT_LING_API_KEY"],
    "qwen-token-plan": ["QWEN_TOKEN_PLAN_TEAM_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"],
    "qwen-token-plan-cn": ["QWEN_TOKEN_PLAN_TEAM_CN_API_KEY", "QWEN_TOKEN_PLAN_CN_API_KEY"],
    "qwen-token-plan-individual": ["QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"],
    "qwen-token-plan-individual-cn": ["QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY", "QWEN_TOKEN_PLAN_CN_API_KEY"],
    "openai": ["OPENAI_API_KEY"],
    "azure": ["AZURE_OPENAI_API_KEY"],
    "nvidia": ["NVIDIA_API_KEY"],
    "deepseek": ["DEEPSEEK_API_KEY"],
    "google": ["GEMINI_API_KEY"],
    "google-vertex": ["GOOGLE_CLOUD_API_KEY"],
    "groq": ["GROQ_API_KEY"],
    "cerebras": ["CEREBRAS_API_KEY"],
    "xai": ["XAI_API_KEY"],
    "typesafe": ["TYPESAFE_API_KEY"],
    "radius": ["RADIUS_API_KEY"],
    "openrouter": ["OPENROUTER_API_KEY"],
    "vercel-ai-gateway": ["AI_GATEWAY_API_KEY"],
    "zai": ["ZAI_API_KEY"],
    "zai-coding-cn": ["ZAI_CODING_CN_API_KEY"],
    "mistral": ["MISTRAL_API_KEY"],
    "minimax": ["MINIMAX_API_KEY"],
    "minimax-cn": ["MINIMAX_CN_API_KEY"],
    "moonshotai": ["MOONSHOT_API_KEY"],
    "moonshotai-cn": ["MOONSHOT_API_KEY"],
    "huggingface": ["HF_TOKEN"],
    "fireworks": ["FIREWORKS_API_KEY"],
    "together": ["TOGETHER_API_KEY"],
    "baseten": ["BASETEN_API_KEY"],
    "opencode": ["OPENCODE_API_KEY"],
    "opencode-go": ["OPENCODE_API_KEY"],
    "kimi-coding": ["KIMI_API_KEY"],
    "meta": ["META_API_KEY"],
    "cloudflare-workers-ai": ["CLOUDFLARE_API_KEY"],
    "cloudflare-ai-gateway": ["CLOUDFLARE_API_KEY"],
    "xiaomi": ["XIAOMI_API_KEY"],
    "xiaomi-token-plan-cn": ["XIAOMI_TOKEN_PLAN_CN_API_KEY"],
    "xiaomi-token-plan-ams": ["XIAOMI_TOKEN_PLAN_AMS_API_KEY"],
    "xiaomi-token-plan-sgp": ["XIAOMI_TOKEN_PLAN_SGP_API_KEY"],
    "amazon-bedrock": [],
    "openai-codex": [],
}

# Environment that gives every provider of the catalog a (fake) credential, for listings.
FAKE_ENV: dict[str, str] = {
    **{name: "fake-key" for names in ENV_KEYS.values() for name in names if "ANTHROPIC_" not in name},
    "ANTHROPIC_API_KEY": "fake-key",
    "AZURE_OPENAI_RESOURCE_NAME": "res",
    "CLOUDFLARE_ACCOUNT_ID": "acct",
    "CLOUDFLARE_GATEWAY_ID": "gw",
    "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
    "AWS_SECRET_ACCESS_KEY": "fake-secret",
    "AWS_REGION": "us-east-1",
}


def _bundle_text() -> str:
    return "".join(p.read_text(encoding="utf-8") for p in sorted((PI_AGENT / "bundle/chunks").glob("*.js")))


def _default_models() -> dict[str, str]:
    match = re.search(r"defaultModelPerProvider=(\{[^}]*\})", _bundle_text())
    assert match, "defaultModelPerProvider not found in pi's bundle"
    text = re.sub(r"([{,])([A-Za-z_][\w]*):", r'\1"\2":', match.group(1))
    return json.loads(text)


def _names() -> dict[str, str]:
    names = {}
    for path in (PI_AI / "providers").glob("*.js"):
        found = re.search(r'id: "([^"]+)",\s*name: "([^"]+)"', path.read_text(encoding="utf-8"))
        if found:
            names[found.group(1)] = found.group(2)
    return names


def generate() -> list[str]:
    defaults = _default_models()
    order = list(defaults)
    names = _names()
    written = []
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.json"):
        old.unlink()
    for path in sorted((PI_AI / "providers/data").glob("[!.]*.json")):
        provider = path.stem
        data = json.loads(path.read_text(encoding="utf-8"))
        models = [m for per_api in data.values() for m in per_api.values() if m.get("type", "chat") == "chat"]
        if not models:
            continue  # classifier-only providers (typesafe) list nothing
        api = collections.Counter(m["api"] for m in models).most_common(1)[0][0]
        base = collections.Counter(m.get("baseUrl", "") for m in models).most_common(1)[0][0]
        out_models = []
        for m in sorted(models, key=lambda m: m["id"]):
            entry = {k: v for k, v in m.items() if k not in ("provider", "type")}
            if entry.get("api") == api:
                del entry["api"]
            if entry.get("baseUrl", "") == base:
                entry.pop("baseUrl", None)
            out_models.append(entry)
        doc = {
            "id": provider,
            "name": names.get(provider, provider),
            "api": api,
            "baseUrl": base,
            "envKeys": ENV_KEYS.get(provider, []),
            # pi's preference order; Anthropic first so that with no credentials at all the
            # missing-key line names ANTHROPIC_API_KEY (pi-host's fallback, not pi's).
            "rank": -1
            if provider == "anthropic"
            else order.index(provider)
            if provider in order
            else len(order),
            "defaultModel": defaults.get(provider),
            "models": out_models,
        }
        target = OUT / f"{provider}.json"
        target.write_text(json.dumps(doc, separators=(",", ":"), ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(provider)
    INDEX.write_text(json.dumps(build_index(OUT), separators=(",", ":")) + "\n", encoding="utf-8")
    return written


def build_index(catalog: Path) -> dict:
    """``catalog_index.json``: each provider file's fields without its models, plus the ids of
    its models in order (the plugin parses a provider's file only when it is used)."""
    providers = []
    for path in sorted(catalog.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        if path.stem != doc["id"]:
            raise ValueError(f"{path.name} holds provider {doc['id']!r}")
        providers.append(
            {**{k: v for k, v in doc.items() if k != "models"}, "models": [m["id"] for m in doc["models"]]}
        )
    return {"providers": providers}


def pi_listing(env: dict[str, str] | None = None, timeout: float = 60) -> str | None:
    """pi 1.6.0's ``--list-models`` with :data:`FAKE_ENV` in clean temp dirs, or None without pi."""
    import tempfile

    from tests.support.pi_node import find_pi

    found = find_pi()
    if found is None:
        return None
    node, cli = found
    with tempfile.TemporaryDirectory() as tmp:
        agent, home = Path(tmp, "agent"), Path(tmp, "home")
        agent.mkdir()
        home.mkdir()
        run_env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "PI_CODING_AGENT_DIR": str(agent),
            "PI_OFFLINE": "1",
            "PI_SKIP_VERSION_CHECK": "1",
            "PI_TELEMETRY": "0",
            **(FAKE_ENV if env is None else env),
        }
        # A file, not a pipe: pi exits before a piped stdout is drained and the listing is cut short.
        out = Path(tmp, "stdout.txt")
        with out.open("w") as sink:
            subprocess.run(
                [node, cli, "--list-models"],
                stdout=sink,
                stderr=subprocess.DEVNULL,
                env=run_env,
                timeout=timeout,
                cwd=tmp,
            )
        return out.read_text(encoding="utf-8")


if __name__ == "__main__":
    print("wrote", " ".join(generate()))
    if "--record" in sys.argv:
        listing = pi_listing()
        assert listing
        RECORDED_LISTING.parent.mkdir(parents=True, exist_ok=True)
        RECORDED_LISTING.write_text(listing, encoding="utf-8")
        print("recorded", RECORDED_LISTING)
