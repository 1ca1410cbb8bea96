"""Every subscription sign-in against a loopback authorization server (tests/support/oauth_server.py):
authorize (browser callback, pasted redirect URL, device code), token exchange, refresh under
auth.json's lock, and a revoked refresh token ending in one line that asks to log in again. The
stored credentials have pi 1.6.0's auth.json fields, and no token reaches an error text."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.support.oauth_server import ACCOUNT, AuthServer


@pytest.fixture
def auth_server(isolated_environment, monkeypatch):
    from pi_host.config import oauth_login

    monkeypatch.setattr(oauth_login, "MINIMUM_INTERVAL_S", 0.01)
    monkeypatch.setattr(oauth_login, "DEFAULT_INTERVAL_S", 0.01)
    monkeypatch.setenv("PI_HOST_OAUTH_CALLBACK_PORT", "0")
    with AuthServer() as server:
        monkeypatch.setenv("PI_HOST_OAUTH_ORIGIN", server.url)
        monkeypatch.setenv("KIMI_CODE_OAUTH_HOST", server.url)
        yield server


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any) -> None:
        return None


def browser_interaction(
    *, paste: bool = False, method: str = "browser", tamper: bool = False, text: str = ""
):
    """An Interaction whose "browser" follows the authorize URL to the callback server, or (``paste``)
    stops at the redirect and pastes its URL, as a user on another machine would."""
    from pi_host.config.oauth_login import Interaction

    events: list[dict[str, Any]] = []
    pasted = threading.Event()
    location: dict[str, str] = {}

    def notify(event: dict[str, Any]) -> None:
        events.append(event)
        if event["type"] != "auth_url":
            return
        if paste:
            try:
                urllib.request.build_opener(_NoRedirect).open(event["url"])
            except urllib.error.HTTPError as exc:
                location["url"] = exc.headers["Location"] + ("x" if tamper else "")
            pasted.set()
        else:
            threading.Thread(target=lambda: urllib.request.urlopen(event["url"]).read(), daemon=True).start()

    def manual_code(message: str, placeholder: str, done: threading.Event) -> str | None:
        if paste:
            pasted.wait(5)
            return location["url"]
        done.wait()
        return None

    interaction = Interaction(
        notify=notify, select=lambda m, options: method, text=lambda m, p: text, manual_code=manual_code
    )
    return interaction, events


def _store(path, provider: str, entry: dict[str, Any]) -> None:
    path.write_text(json.dumps({provider: entry}))


def _refresh_then_revoke(path, provider: str, server: AuthServer) -> dict[str, Any]:
    """Expire the stored login: a request refreshes it (written back); then the refresh token is
    revoked and the next refresh fails with one line asking to log in again, naming no token."""
    from pi_host.config.credentials import AuthStorage

    entry = json.loads(path.read_text())[provider]
    _store(path, provider, {**entry, "expires": 0})
    stored, access = AuthStorage(str(path)).resolve_key(provider)
    refreshed = json.loads(path.read_text())[provider]
    assert stored and access == refreshed["access"] != entry["access"]
    assert refreshed["expires"] > time.time() * 1000 + 10 * 60 * 1000
    server.revoked.add(refreshed["refresh"])
    _store(path, provider, {**refreshed, "expires": 0})
    storage = AuthStorage(str(path))
    assert storage.resolve_key(provider) == (True, None)
    problem = storage.oauth_problems[provider]
    assert "\n" not in problem and f"log in again (pi auth login {provider}" in problem
    assert refreshed["refresh"] not in problem and refreshed["access"] not in problem
    assert json.loads(path.read_text())[provider]["refresh"] == refreshed["refresh"]  # left as it was
    return refreshed


def test_codex_browser_login_refresh_and_revoked_refresh(auth_server, isolated_environment):
    from pi_host.config.oauth_providers import PROVIDERS

    interaction, events = browser_interaction()
    entry = PROVIDERS["openai-codex"].login(interaction)
    assert set(entry) == {"type", "access", "refresh", "expires", "accountId"}
    assert entry["type"] == "oauth" and entry["accountId"] == ACCOUNT
    authorize = next(r for r in auth_server.requests if r.path == "/oauth/authorize").query
    assert authorize["client_id"] == "app_EMoamEEZ73f0CkXaXp7hrann" and authorize["originator"] == "pi"
    assert (
        authorize["code_challenge_method"] == "S256"
        and authorize["scope"] == "openid profile email offline_access"
    )
    exchange = next(r for r in auth_server.requests if r.path == "/oauth/token").form()
    assert (
        exchange["grant_type"] == "authorization_code"
        and exchange["redirect_uri"] == authorize["redirect_uri"]
    )
    path = isolated_environment["agent"] / "auth.json"
    _store(path, "openai-codex", entry)
    _refresh_then_revoke(path, "openai-codex", auth_server)
    refresh = [r.form() for r in auth_server.requests if r.path == "/oauth/token"][1]
    assert refresh == {
        "grant_type": "refresh_token",
        "refresh_token": entry["refresh"],
        "client_id": authorize["client_id"],
    }


def test_codex_pasted_redirect_url_and_state_mismatch(auth_server):
    from pi_host.config.oauth_http import OAuthError
    from pi_host.config.oauth_providers import PROVIDERS

    interaction, _ = browser_interaction(paste=True)
    assert PROVIDERS["openai-codex"].login(interaction)["accountId"] == ACCOUNT
    interaction, _ = browser_interaction(paste=True, tamper=True)
    with pytest.raises(OAuthError, match="State mismatch"):
        PROVIDERS["openai-codex"].login(interaction)


def test_codex_device_code_login(auth_server):
    from pi_host.config.oauth_providers import PROVIDERS

    interaction, events = browser_interaction(method="device_code")
    entry = PROVIDERS["openai-codex"].login(interaction)
    assert entry["accountId"] == ACCOUNT
    assert {
        "type": "device_code",
        "userCode": "CODE-1",
        "verificationUri": "https://auth.openai.com/codex/device",
    } in events
    exchange = [r.form() for r in auth_server.requests if r.path == "/oauth/token"][0]
    assert (
        exchange["code"] == "device-code-1"
        and exchange["redirect_uri"] == "https://auth.openai.com/deviceauth/callback"
    )


def test_sign_in_with_chatgpt_registers_a_client_and_keeps_the_device_id(auth_server, isolated_environment):
    from pi_host.config.oauth_providers import PROVIDERS

    interaction, _ = browser_interaction()
    entry = PROVIDERS["openai"].login(interaction)
    assert set(entry) == {"type", "access", "refresh", "expires", "clientId", "scopes"}
    assert entry["clientId"] == "issued-client-9" and "chatgpt.tokens.use.direct" in entry["scopes"]
    settings = json.loads((isolated_environment["agent"] / "settings.json").read_text())
    authorize = next(r for r in auth_server.requests if r.path == "/api/accounts/authorize").query
    assert authorize["ext_agent_host_id"] == f"urn:uuid:{settings['deviceId']}"
    assert authorize["client_id"] == "dynamic_agent_client"
    path = isolated_environment["agent"] / "auth.json"
    _store(path, "openai", entry)
    _refresh_then_revoke(path, "openai", auth_server)


def test_github_copilot_device_flow_and_copilot_token(auth_server, isolated_environment):
    from pi_host.config.oauth_providers import PROVIDERS, copilot_base_url

    interaction, events = browser_interaction()
    entry = PROVIDERS["github-copilot"].login(interaction)
    assert set(entry) == {"type", "access", "refresh", "expires", "availableModelIds"}
    assert entry["refresh"] == "gho_github_user_token_1" and entry["availableModelIds"] == ["gpt-4.1"]
    assert copilot_base_url(entry["access"]) == "https://api.business.githubcopilot.com"
    assert {
        "type": "device_code",
        "userCode": "USER-1",
        "verificationUri": "https://example.test/device",
    } in events
    start = next(r for r in auth_server.requests if r.path == "/login/device/code").form()
    assert start == {"client_id": "Iv1.b507a08c87ecfe98", "scope": "read:user"}
    token = next(r for r in auth_server.requests if r.path == "/copilot_internal/v2/token")
    assert token.headers["authorization"] == "Bearer gho_github_user_token_1"
    assert token.headers["copilot-integration-id"] == "vscode-chat"
    path = isolated_environment["agent"] / "auth.json"
    _store(path, "github-copilot", entry)
    _refresh_then_revoke(path, "github-copilot", auth_server)


@pytest.mark.parametrize("provider", ["kimi-coding", "xai", "meta"])
def test_device_flow_providers(provider, auth_server, isolated_environment):
    from pi_host.config.oauth_providers import PROVIDERS

    interaction, events = browser_interaction()
    entry = PROVIDERS[provider].login(interaction)
    assert set(entry) == {"type", "access", "refresh", "expires"} and entry["type"] == "oauth"
    assert any(e["type"] == "device_code" and e["userCode"] == "USER-1" for e in events)
    path = isolated_environment["agent"] / "auth.json"
    _store(path, provider, entry)
    _refresh_then_revoke(path, provider, auth_server)


def test_openrouter_key_through_pkce(auth_server):
    from pi_host.config.oauth_providers import NEVER_EXPIRES, PROVIDERS

    interaction, _ = browser_interaction()
    assert PROVIDERS["openrouter"].login(interaction) == {
        "type": "oauth", "access": "sk-or-v1-loopback", "refresh": "", "expires": NEVER_EXPIRES
    }  # fmt: skip


async def test_codex_request_shape_and_streamed_tool_call(auth_server, isolated_environment):
    """The openai-codex-responses API with a stored login: pi's URL, headers and body; the
    backend's response.done ends the stream; the token is in no event."""
    import asyncio

    from pi_host.config.credentials import AuthStorage
    from pi_host.config.models import ModelRegistry
    from pi_host.config.oauth_providers import PROVIDERS
    from pi_host.plugins.selection import PluginRequest, load_plugins
    from tests.support.providers.openai_google import collect, context, final, options

    interaction, _ = browser_interaction()
    entry = await asyncio.to_thread(PROVIDERS["openai-codex"].login, interaction)
    AuthStorage().update("openai-codex", entry)
    agent = isolated_environment["agent"]
    (agent / "models.json").write_text(
        json.dumps({"providers": {"openai-codex": {"baseUrl": auth_server.url}}})
    )
    registry = ModelRegistry.from_plugins(load_plugins(PluginRequest(cwd=str(agent))).host)
    model = registry.find("openai-codex", "gpt-5.6-sol")
    key = await asyncio.to_thread(registry.get_api_key, "openai-codex")
    events = await collect(
        registry.stream_fn(model)(model, context(), options(api_key=key, session_id="s-1"))
    )
    message = final(events)
    assert events[-1].type == "done", message.error_message
    assert message.stop_reason == "toolUse" and message.tool_calls()[0].name == "read"
    request = next(r for r in auth_server.requests if r.path == "/codex/responses")
    assert request.headers["authorization"] == f"Bearer {entry['access']}"
    assert request.headers["chatgpt-account-id"] == ACCOUNT and request.headers["session-id"] == "s-1"
    assert (
        request.headers["openai-beta"] == "responses=experimental" and request.headers["originator"] == "pi"
    )
    body = request.json()
    assert body["model"] == "gpt-5.6-sol" and body["store"] is False and body["stream"] is True
    assert body["include"] == ["reasoning.encrypted_content"] and body["text"] == {"verbosity": "low"}
    assert body["tool_choice"] == "auto" and body["parallel_tool_calls"] is True
    assert all("strict" not in tool for tool in body.get("tools", []))
    assert entry["access"] not in repr(events)


def test_copilot_requests_go_to_the_host_the_token_names(isolated_environment):
    from pi_host.config.models import ModelRegistry
    from pi_host.plugins.selection import PluginRequest, load_plugins
    from tests.support.providers.openai_google import context, options

    registry = ModelRegistry.from_plugins(
        load_plugins(PluginRequest(cwd=str(isolated_environment["work"]))).host
    )
    model = registry.find("github-copilot", "gpt-4.1") or next(
        m for m in registry.models() if m.provider == "github-copilot"
    )
    info = registry.providers["github-copilot"]
    token = "tid=1;exp=9;proxy-ep=proxy.enterprise.githubcopilot.com;sku=x"
    moved, _ = info.prepare(model, options(api_key=token), context())
    assert moved.base_url == "https://api.enterprise.githubcopilot.com"
    kept, _ = info.prepare(model, options(api_key="ghu_plain_token"), context())
    assert kept.base_url == model.base_url


# --- Radius: the gateway's own OAuth client APIs (tests/support/providers/radius.py) --------------


@pytest.fixture
def radius_gateway(isolated_environment, monkeypatch):
    from pi_host.config import oauth_login
    from tests.support.providers.radius import RadiusGateway

    monkeypatch.setattr(oauth_login, "MINIMUM_INTERVAL_S", 0.01)
    monkeypatch.setattr(oauth_login, "DEFAULT_INTERVAL_S", 0.01)
    monkeypatch.setenv("PI_HOST_OAUTH_CALLBACK_PORT", "0")
    with RadiusGateway() as server:
        monkeypatch.setenv("PI_HOST_OAUTH_ORIGIN", server.url)
        yield server


def test_radius_browser_login_refresh_and_revoked_refresh(radius_gateway, isolated_environment):
    from pi_host.config.oauth_providers import PROVIDERS

    interaction, events = browser_interaction(method="browser")
    entry = PROVIDERS["radius"].login(interaction)
    assert set(entry) == {"type", "access", "refresh", "expires", "scope"}
    assert entry["type"] == "oauth" and entry["scope"] == "gateway offline_access"
    assert entry["expires"] < time.time() * 1000 + 3600 * 1000 - 59_000  # a minute early, as pi
    authorize = next(r for r in radius_gateway.requests if r.path == "/authorize").query
    assert authorize["client_id"] == "pi-gateway" and authorize["scope"] == "gateway offline_access"
    assert authorize["handoff"] == "url" and authorize["code_challenge_method"] == "S256"
    assert authorize["redirect_uri"].endswith("/oauth/callback")
    assert events[0]["type"] == "progress" and authorize["redirect_uri"] in events[0]["message"]
    assert events[1]["instructions"] == "Continue in your browser."
    exchange = next(r for r in radius_gateway.requests if r.path == "/v1/oauth/token").form()
    assert exchange["grant_type"] == "authorization_code" and exchange["client_id"] == "pi-gateway"
    assert exchange["redirect_uri"] == authorize["redirect_uri"]
    path = isolated_environment["agent"] / "auth.json"
    _store(path, "radius", entry)
    _refresh_then_revoke(path, "radius", radius_gateway)
    refresh = [r.form() for r in radius_gateway.requests if r.path == "/v1/oauth/token"][1]
    assert refresh == {
        "grant_type": "refresh_token",
        "client_id": "pi-gateway",
        "refresh_token": entry["refresh"],
    }


def test_radius_pasted_redirect_and_device_code(radius_gateway):
    from pi_host.config.oauth_http import OAuthError
    from pi_host.config.oauth_providers import PROVIDERS

    interaction, _ = browser_interaction(paste=True, method="browser")
    assert PROVIDERS["radius"].login(interaction)["access"].startswith("radius-access-")
    interaction, _ = browser_interaction(paste=True, method="browser", tamper=True)
    with pytest.raises(OAuthError, match="State mismatch"):
        PROVIDERS["radius"].login(interaction)
    interaction, events = browser_interaction(method="device-code")
    entry = PROVIDERS["radius"].login(interaction)
    assert entry["access"].startswith("radius-access-") and entry["refresh"].startswith("radius-refresh-")
    notice = next(e for e in events if e["type"] == "device_code")
    assert notice["userCode"] == "RAD-1" and notice["verificationUri"] == "https://example.test/radius/device"
    start = next(r for r in radius_gateway.requests if r.path == "/v1/oauth/device").form()
    assert start == {"client_id": "pi-gateway", "scope": "gateway offline_access"}
    polls = [r.form() for r in radius_gateway.requests if r.path == "/v1/oauth/token"][-2:]
    assert [p["grant_type"] for p in polls] == ["urn:ietf:params:oauth:grant-type:device_code"] * 2
    assert polls[0]["device_code"] == "radius-dc-1"
