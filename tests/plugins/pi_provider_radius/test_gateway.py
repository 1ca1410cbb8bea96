"""The Radius gateway's model list (``GET /v1/config``) against the loopback gateway: pi's
sanitizing, the list replacing the shipped catalog, and its storage in models-store.json through
``ProviderInfo.personalize`` (wired here by hand: the catalog plugin registers Radius)."""

from __future__ import annotations

import json

import pytest
from pi_provider_catalog import radius_gateway as gateway

from tests.support.providers.radius import GATEWAY_MODEL, KEY, RadiusGateway


@pytest.fixture
def server():
    with RadiusGateway() as running:
        yield running


def test_gateway_is_the_origin_of_the_base_url():
    assert gateway.gateway_for("https://radius.pi.dev/v1") == "https://radius.pi.dev"
    assert gateway.gateway_for("") == gateway.DEFAULT_GATEWAY
    assert gateway.normalize_gateway("radius.example.com/") == "https://radius.example.com"


def test_personalize_replaces_the_catalog_with_the_accounts_models(server):
    catalog = [{"id": "kimi-k3", "name": "Kimi K3"}]
    models = gateway.personalize(catalog, server.url + "/v1", KEY)
    assert models == [
        {**GATEWAY_MODEL, "api": "pi-messages", "baseUrl": server.url + "/v1"}
    ]  # "broken" skipped
    (seen,) = server.requests
    assert seen.method == "GET" and seen.path == "/v1/config"
    assert seen.headers["authorization"] == f"Bearer {KEY}" and seen.headers["accept"] == "application/json"


def test_a_refused_or_malformed_config_is_an_error_in_pis_words(server):
    server.config_status = 503
    with pytest.raises(gateway.GatewayError) as refused:
        gateway.personalize([], server.url + "/v1", KEY)
    assert str(refused.value) == f"Could not load Radius config from {server.url}: 503: " + json.dumps(
        {"error": {"message": "config refused"}}
    )
    assert gateway.sanitize_config({"baseUrl": 1, "models": []}) is None
    assert gateway.sanitize_config({"baseUrl": "u", "models": [{"id": "x"}, GATEWAY_MODEL]}) == {
        "baseUrl": "u",
        "models": [GATEWAY_MODEL],
    }


def test_stored_list_replaces_the_baseline_for_later_runs(server, isolated_environment, monkeypatch):
    from pi_host.config import model_store
    from pi_host.config.models import ModelRegistry
    from pi_host.plugins.selection import PluginRequest, load_plugins

    agent = isolated_environment["agent"]
    (agent / "models.json").write_text(json.dumps({"providers": {"radius": {"baseUrl": server.url + "/v1"}}}))
    monkeypatch.setenv("RADIUS_API_KEY", KEY)
    registry = ModelRegistry.from_plugins(load_plugins(PluginRequest(cwd=str(agent))).host)
    assert registry.find("radius", "kimi-k3") is not None  # the shipped baseline
    registry.providers["radius"].personalize = gateway.personalize  # what the catalog plugin would set
    assert model_store.refresh(registry, ["radius"]) == {}
    stored = json.loads((agent / "models-store.json").read_text())["radius"]
    assert [m["id"] for m in stored["models"]] == ["team-model"] and stored["models"][0][
        "provider"
    ] == "radius"
    assert stored["models"][0]["api"] == "pi-messages" and isinstance(stored["checkedAt"], int)
    assert registry.find("radius", "team-model").base_url == server.url + "/v1"
    assert registry.find("radius", "kimi-k3") is None  # replaced, not laid over
