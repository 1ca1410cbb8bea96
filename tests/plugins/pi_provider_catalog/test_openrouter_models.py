"""OpenRouter's per-key model list as pi 1.6.0 keeps it, against a loopback server: ``pi update
models`` (and a login) fetch ``<baseUrl>/models/user`` with the key and store the narrowed list,
with the key's limits and prices, in models-store.json in pi's shape; later runs (print and
offline ones included) read it without a request; a refused key keeps the catalog; a failure
changes nothing and says so."""

from __future__ import annotations

import json

import pytest

from pi_host.config import model_store
from pi_host.config.models import ModelRegistry
from pi_host.plugins.selection import PluginRequest, load_plugins
from tests.support.providers.openai_google import module_server_fixture, sse_fixture  # noqa: F401
from tests.support.providers.sse import Reply

KEY = "sk-or-v1-loopback-per-key-list"
USER_MODELS = {
    "data": [
        {
            "id": "moonshotai/kimi-k2.7-code",
            "context_length": 100000,
            "top_provider": {"context_length": 120000, "max_completion_tokens": 9000},
            "pricing": {
                "prompt": "0.000001",
                "completion": "0.000004",
                "input_cache_read": "-1",
                "overrides": [
                    {"min_prompt_tokens": 200000, "prompt": "0.000002"},
                    {"min_prompt_tokens": 1, "utc_start": "00:00", "prompt": "0"},
                ],
            },
        },
        {"id": "anthropic/claude-fable-5", "context_length": 0, "top_provider": {}},
        {"id": "not-in-the-catalog/x"},
    ]
}


@pytest.fixture
def agent(sse, isolated_environment, monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    agent = isolated_environment["agent"]
    models = {"providers": {"openrouter": {"baseUrl": sse.url + "/api/v1"}}}
    (agent / "models.json").write_text(json.dumps(models))
    return agent


def registry():
    return ModelRegistry.from_plugins(load_plugins(PluginRequest(cwd=".")).host)


def openrouter(reg):
    return {m.id: m for m in reg.models() if m.provider == "openrouter"}


def test_refresh_narrows_the_list_and_later_runs_read_it_offline(sse, agent):
    reg = registry()
    catalog = openrouter(reg)
    assert len(catalog) > 100  # the built-in catalog until a refresh
    sse.enqueue(Reply.json(200, USER_MODELS), path="/api/v1/models/user")
    assert model_store.refresh(reg) == {}
    request = sse.last
    assert (request.method, request.path) == ("GET", "/api/v1/models/user")
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["accept"] == "application/json"
    listed = openrouter(reg)
    assert sorted(listed) == ["anthropic/claude-fable-5", "moonshotai/kimi-k2.7-code"]
    kimi = listed["moonshotai/kimi-k2.7-code"]
    assert (kimi.context_window, kimi.max_tokens) == (120000, 9000)
    assert (kimi.cost.input, kimi.cost.output, kimi.cost.cache_read) == (1.0, 4.0, 0)
    assert kimi.cost.tiers == [
        {"inputTokensAbove": 200000, "input": 2.0, "output": 4.0, "cacheRead": 0, "cacheWrite": 0}
    ]
    fable = listed["anthropic/claude-fable-5"]  # missing limits and prices keep the catalog's
    before = catalog["anthropic/claude-fable-5"]
    assert (fable.context_window, fable.api, fable.cost) == (
        before.context_window,
        "anthropic-messages",
        before.cost,
    )
    # pi's file and shape: provider-keyed, full models with their provider, and when it was checked
    stored = json.loads((agent / "models-store.json").read_text())["openrouter"]
    assert isinstance(stored["checkedAt"], int)
    assert {m["provider"] for m in stored["models"]} == {"openrouter"}
    assert {m["id"] for m in stored["models"]} == set(listed)
    assert KEY not in (agent / "models-store.json").read_text()
    # a later run (print, offline) reads the stored list and asks nothing
    requests = len(sse.requests)
    assert sorted(openrouter(registry())) == sorted(listed)
    assert len(sse.requests) == requests


def test_refused_key_keeps_the_catalog_and_a_failure_changes_nothing(sse, agent):
    reg = registry()
    size = len(openrouter(reg))
    sse.enqueue(Reply.json(401, {"error": {"message": "bad key"}}), path="/api/v1/models/user")
    assert model_store.refresh(reg) == {}
    assert len(openrouter(reg)) == size
    (agent / "models-store.json").unlink()
    sse.enqueue(Reply.json(503, {"error": "down"}), path="/api/v1/models/user")
    assert model_store.refresh(reg) == {"openrouter": "OpenRouter model list request failed: 503"}
    assert not (agent / "models-store.json").exists()
    sse.enqueue(Reply.json(200, {"models": []}), path="/api/v1/models/user")
    assert model_store.refresh(reg) == {"openrouter": "Invalid OpenRouter model list response"}


def test_pi_update_models_and_no_key_no_request(sse, agent, monkeypatch, capsys):
    from pi_packages.commands import cmd_update

    sse.enqueue(Reply.json(200, USER_MODELS), path="/api/v1/models/user")
    assert cmd_update(["models"]) == 0
    assert capsys.readouterr().out == "Model catalogs refreshed\n"
    assert "openrouter" in json.loads((agent / "models-store.json").read_text())
    sse.enqueue(Reply.json(500, {}), path="/api/v1/models/user")
    assert cmd_update(["models"]) == 1
    assert (
        capsys.readouterr().err
        == "Error: Could not refresh model catalogs: openrouter: OpenRouter model list request failed: 500\n"
    )
    monkeypatch.delenv("OPENROUTER_API_KEY")
    requests = len(sse.requests)
    assert model_store.refresh(registry()) == {}
    assert len(sse.requests) == requests


def test_a_login_refreshes_the_list(sse, agent, monkeypatch, capsys):
    import io

    from pi_auth.cli import run

    monkeypatch.delenv("OPENROUTER_API_KEY")
    monkeypatch.setattr("sys.stdin", io.StringIO(KEY + "\n"))
    sse.enqueue(Reply.json(200, USER_MODELS), path="/api/v1/models/user")
    assert run(["login", "openrouter", "--api-key"]) == 0
    assert capsys.readouterr().out.startswith("Saved API key for openrouter.")
    assert sse.last.headers["authorization"] == f"Bearer {KEY}"
    assert len(openrouter(registry())) == 2
