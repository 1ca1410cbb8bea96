"""Model registry: catalog, models.json (§3.11), auth.json and key order (§3.10, §11 item 19), patterns."""

from __future__ import annotations

import json
import os
import stat
import sys

import pi_provider_anthropic
import pi_provider_catalog
import pi_provider_faux
import pytest

from pi_host.config.credentials import AuthStorage, resolve_config_value
from pi_host.config.json_files import file_lock
from pi_host.config.models import ModelNotFound, ModelRegistry
from pi_host.plugins.dispatch import PluginHost, PluginRecord


def make_registry(agent, models_json=None, auth=None):
    if models_json is not None:
        (agent / "models.json").write_text(json.dumps(models_json))
    if auth is not None:
        (agent / "auth.json").write_text(json.dumps(auth))
    host = PluginHost()
    host.register(pi_provider_faux, PluginRecord(name="faux", source="builtin"))
    host.register(pi_provider_anthropic, PluginRecord(name="provider-anthropic", source="builtin"))
    host.register(pi_provider_catalog, PluginRecord(name="provider-catalog", source="builtin"))
    return ModelRegistry.from_plugins(host)


@pytest.fixture
def agent(isolated_environment):
    return isolated_environment["agent"]


def test_catalog_from_plugin_data_file(agent):
    registry = make_registry(agent)
    model = registry.find("anthropic", "claude-opus-4-8")
    assert model.api == "anthropic-messages" and model.base_url == "https://api.anthropic.com"
    assert model.reasoning and model.supports_images()
    assert model.cost.input == 5 and model.context_window == 1_000_000
    assert registry.stream_fn(model) is not None
    assert registry.problems == []


def test_models_json_custom_provider_overrides_and_redirect(agent, monkeypatch):
    monkeypatch.setenv("LOCAL_KEY", "from-env")
    registry = make_registry(
        agent,
        {
            "$schema": "ignored",
            "providers": {
                "local-claude": {
                    "baseUrl": "http://127.0.0.1:9999",
                    "api": "anthropic-messages",
                    "apiKey": "$LOCAL_KEY",
                    "compat": {"supportsEagerToolInputStreaming": False, "x": 1},
                    "models": [
                        {"id": "tiny", "contextWindow": 8000, "compat": {"x": 2}},
                        {"id": "priced", "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0}},
                    ],
                },
                "anthropic": {
                    "baseUrl": "https://proxy.example.net/anthropic",
                    "headers": {"x-proxy": "1"},
                    "models": [{"id": "claude-opus-4-8", "name": "Replaced", "maxTokens": 1000}],
                    "modelOverrides": {
                        "claude-sonnet-5": {"contextWindow": 400000, "cost": {"input": 9}},
                        "no-such-model": {"contextWindow": 1},
                    },
                },
                "broken": {"models": [{"id": "x"}]},
                "nocost": {
                    "baseUrl": "http://h",
                    "api": "openai-completions",
                    "models": [{"id": "y", "cost": {"input": 1}}],
                },
            },
        },
    )
    tiny = registry.find("local-claude", "tiny")
    assert tiny.name == "tiny" and tiny.context_window == 8000 and tiny.max_tokens == 16384
    assert tiny.reasoning is False and tiny.input == ["text"]
    assert tiny.compat == {"supportsEagerToolInputStreaming": False, "x": 2}
    assert tiny.base_url == "http://127.0.0.1:9999" and tiny.api == "anthropic-messages"
    assert registry.get_api_key("local-claude") == "from-env"
    redirected = registry.find("anthropic", "claude-haiku-4-5")
    assert redirected.base_url == "https://proxy.example.net/anthropic"
    assert redirected.headers == {"x-proxy": "1"}
    replaced = registry.find("anthropic", "claude-opus-4-8")
    assert replaced.name == "Replaced" and replaced.max_tokens == 1000
    assert replaced.api == "anthropic-messages"
    sonnet = registry.find("anthropic", "claude-sonnet-5")
    assert sonnet.context_window == 400000
    assert (sonnet.cost.input, sonnet.cost.output) == (9, 10)  # object fields merge
    assert registry.find("anthropic", "no-such-model") is None
    assert registry.find("broken", "x") is None
    assert any("broken" in p and "baseUrl" in p for p in registry.problems)
    assert any("nocost" in p and "cost" in p for p in registry.problems)


def test_invalid_models_json_is_one_problem_line(agent):
    (agent / "models.json").write_text("{not json")
    registry = make_registry(agent)
    assert len(registry.problems) == 1 and "models.json" in registry.problems[0]
    assert registry.find("anthropic", "claude-opus-5-5") is not None


def test_key_resolution_order(agent, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key")
    registry = make_registry(agent, {"providers": {"anthropic": {"apiKey": "json-key"}}})
    assert registry.get_api_key("anthropic") == "json-key"
    registry.auth.set_api_key("anthropic", "auth-key")
    assert registry.get_api_key("anthropic") == "auth-key"
    registry.runtime_keys["anthropic"] = "cli-key"
    assert registry.get_api_key("anthropic") == "cli-key"
    del registry.runtime_keys["anthropic"]
    registry.auth.update("anthropic", None)
    (agent / "models.json").write_text("{}")
    registry.reload()
    assert registry.get_api_key("anthropic") == "env-key"
    monkeypatch.setenv("ANTHROPIC_OAUTH_TOKEN", "oauth-env")
    assert registry.get_api_key("anthropic") == "oauth-env"


def test_stored_credential_owns_its_provider(agent, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key")
    registry = make_registry(agent, auth={"anthropic": {"type": "api_key", "key": "${UNSET_VAR_XYZ}"}})
    assert registry.get_api_key("anthropic") is None


def test_config_values(monkeypatch):
    monkeypatch.setenv("SOME_KEY", "abc")
    monkeypatch.delenv("UNSET_VAR", raising=False)
    assert resolve_config_value("$$literal") == "$literal"
    assert resolve_config_value("$!bang") == "!bang"
    assert resolve_config_value("${UNSET_VAR}") is None
    assert resolve_config_value("plainname") == "plainname"
    assert resolve_config_value("pre-$SOME_KEY-${SOME_KEY}") == "pre-abc-abc"
    assert resolve_config_value("!echo '  from command  '") == "from command"
    assert resolve_config_value("!exit 3") is None
    assert resolve_config_value("!true") is None


def test_auth_json_mode_lock_env_and_commands(agent, tmp_path, monkeypatch):
    storage = AuthStorage()
    counter = tmp_path / "count"
    command = f"{sys.executable} -c \"import pathlib;p=pathlib.Path('{counter}');p.write_text(p.read_text()+'x' if p.exists() else 'x');print('cmd-key')\""
    storage.update("anthropic", {"type": "api_key", "key": "!" + command})
    storage.update(
        "cf",
        {"type": "api_key", "key": "$CF_TOKEN", "env": {"CF_TOKEN": "tok", "CLOUDFLARE_ACCOUNT_ID": "abc"}},
    )
    path = agent / "auth.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    data = json.loads(path.read_text())
    assert set(data) == {"anthropic", "cf"}
    assert storage.resolve_key("anthropic") == (True, "cmd-key")
    assert storage.resolve_key("anthropic") == (True, "cmd-key")
    assert counter.read_text() == "x"  # auth.json commands run once per process
    assert storage.resolve_key("cf") == (True, "tok")
    assert storage.env_for("cf")["CLOUDFLARE_ACCOUNT_ID"] == "abc"
    assert storage.resolve_key("missing") == (False, None)
    storage.update("oauthy", {"type": "oauth", "access": "acc", "refresh": "r", "expires": 1})
    assert storage.resolve_key("oauthy") == (True, None)  # expired
    # a held lock makes writers wait, then time out with a clear message
    with file_lock(str(path)):
        with pytest.raises(TimeoutError, match="auth.json"):
            with file_lock(str(path), timeout=0.2):
                pass
    assert not (agent / "auth.json.lock").exists()


def test_patterns_and_thinking_suffix(agent, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")  # the one provider with a key wins
    registry = make_registry(
        agent,
        {
            "providers": {
                "ollama": {
                    "baseUrl": "http://127.0.0.1:11434/v1",
                    "api": "openai-completions",
                    "apiKey": "x",
                    "models": [{"id": "qwen3:8b"}],
                }
            }
        },
    )
    assert registry.resolve_cli("anthropic/claude-opus-4-8", None)[0].id == "claude-opus-4-8"
    model, level = registry.resolve_cli("claude-opus-4-8:high", None)
    assert (model.id, level) == ("claude-opus-4-8", "high")
    model, level = registry.resolve_cli("anthropic/claude-opus-4-8:low", None)
    assert (model.provider, model.id, level) == ("anthropic", "claude-opus-4-8", "low")
    assert registry.resolve_cli("qwen3:8b", None) == (registry.find("ollama", "qwen3:8b"), None)
    assert registry.resolve_cli("Claude Opus 4.8", None)[0].id == "claude-opus-4-8"
    # fuzzy: undated alias preferred over the dated snapshot
    assert registry.resolve_cli("haiku-4-5", None)[0].id == "claude-haiku-4-5"
    assert registry.resolve_cli("sonnet", "anthropic")[0].provider == "anthropic"
    assert registry.resolve_cli(None, "anthropic")[0].id == "claude-opus-5-5"
    assert registry.resolve_cli("faux-1", "faux")[0].id == "faux-1"
    with pytest.raises(ModelNotFound, match="nope"):
        registry.resolve_cli("nope-model", None)
    with pytest.raises(ModelNotFound):
        registry.resolve_cli(None, "nosuchprovider")


def test_a_model_of_several_providers_is_refused_as_ambiguous_unless_one_has_a_key(agent, monkeypatch):
    from pi_host.config.model_reference import AmbiguousModel

    registry = make_registry(agent)
    with pytest.raises(AmbiguousModel) as refused:  # pi 1.6.0 refuses rather than guesses
        registry.resolve_cli("claude-opus-4-8", None)
    assert str(refused.value).startswith(
        'Model "claude-opus-4-8" is ambiguous across providers: anthropic/claude-opus-4-8, '
        "cloudflare-ai-gateway/claude-opus-4-8, opencode/claude-opus-4-8"
    )
    assert str(refused.value).endswith(
        "No matching provider is authenticated. Use --provider or provider/model."
    )
    monkeypatch.setenv("OPENCODE_API_KEY", "k1")
    assert registry.resolve_cli("claude-opus-4-8", None)[0].provider == "opencode"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k2")
    with pytest.raises(AmbiguousModel, match="More than one matching provider is authenticated"):
        registry.resolve_cli("claude-opus-4-8", None)
    # a provider prefix or --provider settles it
    assert registry.resolve_cli("anthropic/claude-opus-4-8", None)[0].provider == "anthropic"
    assert registry.resolve_cli("claude-opus-4-8", "opencode")[0].provider == "opencode"


def test_default_model_prefers_configured_providers(agent, monkeypatch):
    registry = make_registry(agent)
    assert registry.resolve_cli(None, None)[0].provider == "anthropic"  # nothing configured
    registry = make_registry(
        agent,
        {
            "providers": {
                "local": {
                    "baseUrl": "http://127.0.0.1:1/v1",
                    "api": "openai-completions",
                    "apiKey": "dummy",
                    "models": [{"id": "m1"}],
                }
            }
        },
    )
    assert registry.resolve_cli(None, None)[0].key == "local/m1"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert registry.resolve_cli(None, None)[0].key == "anthropic/claude-opus-5-5"


def test_key_hint_names_the_env_var_and_files(agent):
    registry = make_registry(
        agent,
        {
            "providers": {
                "local": {"baseUrl": "http://h/v1", "api": "openai-completions", "models": [{"id": "m"}]}
            }
        },
    )
    hint = registry.key_hint("anthropic")
    assert "ANTHROPIC_API_KEY" in hint and "auth.json" in hint and "--api-key" in hint
    assert "\n" not in hint
    local = registry.key_hint("local")
    assert "models.json" in local and '"local"' in local
    assert registry.needs_key("anthropic") and not registry.needs_key("faux")


def test_format_model_list(agent, monkeypatch):
    registry = make_registry(agent)
    listing = registry.format_model_list()
    assert "faux-1" in listing and "claude" not in listing  # only models with auth
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    listing = registry.format_model_list("opus 4-8")
    lines = listing.splitlines()
    assert lines[0].split() == ["provider", "model", "context", "max-out", "thinking", "images"]
    assert lines[1].split() == ["anthropic", "claude-opus-4-8", "1M", "128K", "yes", "yes"]
    assert len(lines) == 2
    assert registry.format_model_list("zzzz-none") == 'No models match "zzzz-none".'


def test_the_catalog_validates_a_model_when_it_is_looked_up(agent):
    """Start-up with ``--model provider/id`` validates that provider's entries, not the ~1,700 of
    the whole catalog; an invalid built-in entry is a problem once it is looked up, and what
    models.json configures is checked at start (its problems are said before any lookup)."""
    from pi_host.config.models import ProviderInfo

    broken = ProviderInfo(
        id="shaky",
        api="openai-completions",
        base_url="http://127.0.0.1:1",
        needs_key=False,
        models=[{"id": "fine", "contextWindow": 1000}, {"id": "broken", "contextWindow": "lots"}],
    )
    registry = ModelRegistry([], [broken], str(agent / "models.json"))
    assert registry.problems == []  # nothing looked up yet: the broken entry is not read
    model, level = registry.resolve_cli("shaky/fine")
    assert (model.provider, model.id, level) == ("shaky", "fine", None)
    assert registry.find("shaky", "broken") is None
    assert len(registry.problems) == 1 and "shaky/broken" in registry.problems[0]
    assert [m.id for m in registry.models()] == ["fine"]

    full = make_registry(agent)
    checked_before = len(full._checked)
    found, _ = full.resolve_cli("faux/faux-1")
    assert found.id == "faux-1"
    checked = len(full._checked) - checked_before
    assert checked < 50 < len(full._raw)  # one provider's models, not the catalog
    assert len(full.models()) == len(full._raw)  # a listing still sees every valid model

    (agent / "models.json").write_text(
        json.dumps(
            {"providers": {"anthropic": {"modelOverrides": {"claude-opus-4-8": {"contextWindow": "big"}}}}}
        )
    )
    configured = make_registry(agent)
    assert any("anthropic/claude-opus-4-8" in p for p in configured.problems)  # said at start
