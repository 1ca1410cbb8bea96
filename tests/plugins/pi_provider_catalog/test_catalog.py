"""pi-host's catalog is pi 1.6.0's: the listing with every provider configured matches pi's
recorded ``--list-models``, and every model's facts match pi-ai's data files (when installed)."""

from __future__ import annotations

import json

import pi_provider_anthropic
import pi_provider_catalog
import pi_provider_google
import pi_provider_openai
import pytest

from pi_host.config.models import ModelRegistry
from pi_host.plugins.dispatch import PluginHost, PluginRecord
from tests.support.providers.pi_catalog import FAKE_ENV, OUT, PI_AI, RECORDED_LISTING


def _registry() -> ModelRegistry:
    host = PluginHost()
    for module in (pi_provider_anthropic, pi_provider_openai, pi_provider_google, pi_provider_catalog):
        host.register(module, PluginRecord(name=module.__name__, source="builtin"))
    return ModelRegistry.from_plugins(host)


def _rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.strip()]


@pytest.fixture
def every_provider_configured(isolated_environment, monkeypatch):
    for name, value in FAKE_ENV.items():
        monkeypatch.setenv(name, value)
    return isolated_environment


def test_listing_matches_pi_1_6_0(every_provider_configured):
    ours = _rows(_registry().format_model_list())
    theirs = _rows(RECORDED_LISTING.read_text(encoding="utf-8"))
    assert len(ours) == len(theirs) == 1689
    assert ours == theirs


def test_listing_without_ambient_credentials_leaves_bedrock_out(isolated_environment, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "fake-key")
    listed = {row[0] for row in _rows(_registry().format_model_list())[1:]}
    assert listed == {"openai"}
    monkeypatch.setenv("AWS_PROFILE", "dev")
    listed = {row[0] for row in _rows(_registry().format_model_list())[1:]}
    assert listed == {"openai", "amazon-bedrock"}


def test_every_provider_has_its_env_vars_and_defaults(isolated_environment):
    registry = _registry()
    assert registry.providers["huggingface"].env_keys == ["HF_TOKEN"]
    assert registry.providers["qwen-token-plan"].env_keys == [
        "QWEN_TOKEN_PLAN_TEAM_API_KEY",
        "QWEN_TOKEN_PLAN_API_KEY",
    ]
    assert registry.default_model("fireworks").id == "accounts/fireworks/models/kimi-k3"
    cerebras = registry.find("cerebras", "gpt-oss-120b")
    assert cerebras.base_url == "https://api.cerebras.ai/v1" and cerebras.api == "openai-completions"
    assert cerebras.cost.input == 0.35 and cerebras.max_tokens == 40960
    gateway = registry.find("cloudflare-ai-gateway", "anthropic/claude-opus-4-8")
    if gateway is not None:  # per-model API and base URL inside one provider
        assert gateway.api == "anthropic-messages" and gateway.base_url.endswith("/anthropic")


@pytest.mark.skipif(not PI_AI.is_dir(), reason="pi 1.6.0 is not installed under .tools/pi")
def test_every_model_fact_matches_pi_ai_data(isolated_environment):
    registry = _registry()
    checked = 0
    for path in sorted((PI_AI / "providers/data").glob("[!.]*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for per_api in data.values():
            for raw in per_api.values():
                if raw.get("type", "chat") != "chat":
                    continue
                model = registry.find(raw["provider"], raw["id"])
                assert model is not None, (raw["provider"], raw["id"])
                dumped = model.model_dump(by_alias=True, exclude_none=True)
                for key in ("api", "baseUrl", "contextWindow", "maxTokens", "reasoning", "input", "name"):
                    assert dumped[key] == raw[key], (raw["provider"], raw["id"], key)
                for key in ("compat", "thinkingLevelMap"):
                    if key in raw:
                        assert dumped[key] == raw[key], (raw["provider"], raw["id"], key)
                assert {k: dumped["cost"][k] for k in ("input", "output", "cacheRead", "cacheWrite")} == {
                    k: raw["cost"][k] for k in ("input", "output", "cacheRead", "cacheWrite")
                }
                checked += 1
    assert checked == 1698  # 1,688 listed + openai-codex's 10 (a login only)
    assert len(list(OUT.glob("*.json"))) == 42
