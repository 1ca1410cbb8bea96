"""The catalog is read per provider, on use (issue 36): ``catalog_index.json`` names every
provider and model id, so a start that names its model parses one provider's file."""

from __future__ import annotations

import json

import pi_provider_catalog
import pi_provider_openai

from pi_host.config.models import ModelRegistry
from pi_host.plugins.dispatch import PluginHost, PluginRecord
from tests.support.providers.pi_catalog import INDEX, OUT, build_index


def _registry(models_json: str) -> ModelRegistry:
    host = PluginHost()
    for module in (pi_provider_openai, pi_provider_catalog):
        host.register(module, PluginRecord(name=module.__name__, source="builtin"))
    return ModelRegistry.from_plugins(host, models_json)


def test_the_shipped_index_matches_the_catalog_files():
    assert json.loads(INDEX.read_text(encoding="utf-8")) == build_index(OUT)


def test_naming_a_model_reads_only_its_providers_file(isolated_environment):
    registry = _registry(str(isolated_environment["agent"] / "models.json"))
    every = registry._raw.pending()
    assert len(every) > 30  # nothing parsed at start
    model, _ = registry.resolve_cli("openai/gpt-4o")
    assert (model.provider, model.id, model.context_window) == ("openai", "gpt-4o", 128000)
    # pi's exact rule also looks at models whose id is the whole text (openrouter's "openai/gpt-4o")
    index = json.loads(INDEX.read_text(encoding="utf-8"))["providers"]
    also = {p["id"] for p in index if "openai/gpt-4o" in p["models"]}
    assert also and registry._raw.pending() == every - {"openai"} - also
    assert registry.find("groq", "no-such-model") is None
    assert "groq" in registry._raw.pending()  # an unknown id is known from the index alone
    assert len(registry.models()) > 1500 and registry._raw.pending() == set()


def test_models_json_overrides_apply_to_a_provider_read_later(isolated_environment):
    agent = isolated_environment["agent"]
    (agent / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "groq": {"modelOverrides": {"llama-3.3-70b-versatile": {"contextWindow": 4242}}},
                    "mistral": {"baseUrl": "http://127.0.0.1:9/v1"},
                }
            }
        )
    )
    registry = _registry(str(agent / "models.json"))
    assert registry.find("groq", "llama-3.3-70b-versatile").context_window == 4242
    assert {m.base_url for m in registry.provider_models("mistral")} == {"http://127.0.0.1:9/v1"}
    listed = {(m.provider, m.id): m for m in registry.models()}  # every provider read now
    assert listed[("groq", "llama-3.3-70b-versatile")].context_window == 4242
    assert listed[("openai", "gpt-4o")].context_window == 128000
