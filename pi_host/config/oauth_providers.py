"""Every OAuth sign-in pi 1.6.0 offers, by provider id: its login flow and its refresh (facts from
pi-ai 1.6.0's OAuth flows: endpoints, client ids, credential fields; the code is pi-host's).

==================  ==============================================  ===================================
provider            sign-in                                         stored besides access/refresh/expires
==================  ==============================================  ===================================
``openai-codex``    browser (PKCE, port 1455) or pasted URL, or     ``accountId``
                    device code
``openai``          browser (PKCE, registered client) or pasted URL ``clientId``, ``scopes``
``github-copilot``  GitHub device flow, then the Copilot token       ``enterpriseUrl``, ``availableModelIds``
``kimi-coding``     device flow (``KIMI_CODE_OAUTH_HOST``)
``xai``             device flow
``meta``            device flow, then a minted Model API key
``openrouter``      browser (PKCE, any port) or pasted URL          a permanent key (never expires)
``radius``          browser (PKCE, port 1456) or pasted URL, or     ``scope``
                    device code (:mod:`pi_host.config.oauth_radius`)
==================  ==============================================  ===================================

Not offered: Anthropic's consumer plans (Anthropic does not allow third-party harnesses on them).
"""

from __future__ import annotations

import base64
import time
import urllib.parse
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pi_host.config import oauth_http as http
from pi_host.config import oauth_openai as openai
from pi_host.config import oauth_radius as radius
from pi_host.config.copilot_models import AccountModels, enable_models, parse_models, with_enabled
from pi_host.config.oauth_http import OAuthError
from pi_host.config.oauth_login import (
    Interaction,
    parse_pasted,
    poll_device,
    start_callback_server,
    wait_for_callback_or_paste,
)

ANTHROPIC_REFUSAL = "Anthropic does not allow third-party harnesses such as pi-host on its consumer (Claude Pro/Max) plans; use an API key."
NEVER_EXPIRES = 9007199254740991  # JavaScript's Number.MAX_SAFE_INTEGER, as pi writes it


def _now_ms() -> int:
    return int(time.time() * 1000)


# --- GitHub Copilot --------------------------------------------------------------------------------

COPILOT_CLIENT_ID = base64.b64decode("SXYxLmI1MDdhMDhjODdlY2ZlOTg=").decode()
COPILOT_HEADERS = {
    "User-Agent": "GitHubCopilotChat/0.35.0",
    "Editor-Version": "vscode/1.107.0",
    "Editor-Plugin-Version": "copilot-chat/0.35.0",
    "Copilot-Integration-Id": "vscode-chat",
}
COPILOT_API_VERSION = "2026-06-01"
COPILOT_DEFAULT_BASE = "https://api.individual.githubcopilot.com"


def _domain(value: str) -> str | None:
    value = value.strip()
    if not value:
        return None
    parts = urllib.parse.urlsplit(value if "://" in value else f"https://{value}")
    return parts.hostname or None


def copilot_base_url(access: str, enterprise: str | None = None) -> str:
    """The API base URL for a Copilot token: its ``proxy-ep`` with ``proxy.`` turned into
    ``api.``; else the enterprise's ``copilot-api.<domain>``; else the individual endpoint."""
    for part in access.split(";"):
        if part.startswith("proxy-ep="):
            host = part[len("proxy-ep=") :]
            return "https://" + ("api." + host[len("proxy.") :] if host.startswith("proxy.") else host)
    return f"https://copilot-api.{enterprise}" if enterprise else COPILOT_DEFAULT_BASE


def _copilot_token(github_token: str, enterprise: str | None) -> dict[str, Any]:
    url = http.endpoint(f"https://api.{enterprise or 'github.com'}/copilot_internal/v2/token")
    headers = {"Authorization": f"Bearer {github_token}", **COPILOT_HEADERS}
    status, body, text = http.request("GET", url, headers=headers)
    if not 200 <= status < 300:
        raise http.failure("Copilot token request", status, body, text)
    token, expires_at = (body or {}).get("token"), (body or {}).get("expires_at")
    if not isinstance(token, str) or isinstance(expires_at, bool) or not isinstance(expires_at, (int, float)):
        raise OAuthError("Invalid Copilot token response fields")
    entry: dict[str, Any] = {"type": "oauth", "refresh": github_token, "access": token}
    entry["expires"] = int(expires_at * 1000 - 5 * 60 * 1000)
    if enterprise:
        entry["enterpriseUrl"] = enterprise
    return entry


def _copilot_models(access: str, enterprise: str | None) -> tuple[str, dict[str, str], AccountModels | None]:
    """The account's model lists (None when they cannot be read: the catalog is then not
    filtered), with the API base and headers a policy change needs."""
    base = copilot_base_url(access, enterprise)
    headers = {
        "Authorization": f"Bearer {access}",
        **COPILOT_HEADERS,
        "X-GitHub-Api-Version": COPILOT_API_VERSION,
    }
    try:
        status, body, _ = http.request("GET", http.endpoint(f"{base}/models"), headers=headers, timeout=5)
    except OAuthError:
        return base, headers, None
    return base, headers, parse_models(body, base) if 200 <= status < 300 else None


def refresh_copilot(entry: dict[str, Any]) -> dict[str, Any]:
    enterprise = _domain(str(entry.get("enterpriseUrl") or "")) if entry.get("enterpriseUrl") else None
    fresh = _copilot_token(str(entry.get("refresh") or ""), enterprise)
    _, _, models = _copilot_models(fresh["access"], enterprise)
    kept = {k: v for k, v in entry.items() if k != "availableModelIds"}
    return {**kept, **fresh, **({"availableModelIds": models.available} if models is not None else {})}


def login_copilot(interaction: Interaction) -> dict[str, Any]:
    answer = interaction.text("GitHub Enterprise URL/domain (blank for github.com)", "company.ghe.com")
    if answer is None:
        raise OAuthError("Login cancelled")
    enterprise = _domain(answer)
    if answer.strip() and not enterprise:
        raise OAuthError("Invalid GitHub Enterprise URL/domain")
    domain = enterprise or "github.com"
    ua = {"User-Agent": COPILOT_HEADERS["User-Agent"]}
    form = {"client_id": COPILOT_CLIENT_ID, "scope": "read:user"}
    status, body, text = http.request(
        "POST", http.endpoint(f"https://{domain}/login/device/code"), form=form, headers=ua
    )
    if not 200 <= status < 300 or not isinstance(body, dict):
        raise http.failure("GitHub device code request", status, body, text)
    verification = http.trusted_http_url(body.get("verification_uri"))
    if (
        not isinstance(body.get("device_code"), str)
        or not isinstance(body.get("user_code"), str)
        or not verification
    ):
        raise OAuthError("Invalid device code response fields")
    interaction.notify(
        {"type": "device_code", "userCode": body["user_code"], "verificationUri": verification}
    )

    def poll() -> tuple[str, Any]:
        fields = {
            "client_id": COPILOT_CLIENT_ID,
            "device_code": body["device_code"],
            "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
        }
        url = http.endpoint(f"https://{domain}/login/oauth/access_token")
        status, answer, text = http.request("POST", url, form=fields, headers=ua)
        if not 200 <= status < 300:
            return "failed", str(http.failure("GitHub device flow", status, answer, text))
        answer = answer if isinstance(answer, dict) else {}
        if isinstance(answer.get("access_token"), str):
            return "complete", answer["access_token"]
        error = answer.get("error")
        if error == "authorization_pending":
            return "pending", None
        if error == "slow_down":
            return "slow_down", http.positive_number(answer.get("interval"))
        return "failed", f"Device flow failed: {error}" if error else "Invalid device token response"

    github_token = poll_device(
        interaction,
        poll,
        http.positive_number(body.get("interval")),
        http.positive_number(body.get("expires_in")),
        wait_first=True,
    )
    entry = _copilot_token(github_token, enterprise)
    base, headers, models = _copilot_models(entry["access"], enterprise)
    if models is None:
        return {**entry, "availableModelIds": []}
    catalog = interaction.catalog_ids("github-copilot") if interaction.catalog_ids else None

    def enable(ids: list[str]) -> list[str]:
        interaction.notify({"type": "progress", "message": "Enabling models..."})
        return enable_models(base, headers, ids)

    return {**entry, "availableModelIds": with_enabled(models, catalog, enable)}


# --- Kimi Code, xAI, Meta: RFC 8628 device flows -------------------------------------------------


def _kimi_host() -> str:
    import os

    override = os.environ.get("KIMI_CODE_OAUTH_HOST") or os.environ.get(
        "KIMI_OAUTH_HOST"
    )  # pi's own variables
    return http.endpoint((override or "https://auth.kimi.com").rstrip("/"))


KIMI_CLIENT_ID = "17e5f671-d194-4dfb-9706-5516cb48c098"
XAI_CLIENT_ID = "b1a00492-073a-47ea-816f-4c329264a828"
XAI_SCOPE = "openid profile email offline_access grok-cli:access api:access"
META_CLIENT_ID = "1031625952748946"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def _rfc8628(
    interaction: Interaction,
    label: str,
    start_url: str,
    token_url: str,
    start_form: dict[str, str],
    client_id: str,
) -> dict[str, Any]:
    """Start a device authorization, show the code, poll the token endpoint; the token answer."""
    status, body, text = http.request("POST", start_url, form=start_form)
    if not 200 <= status < 300 or not isinstance(body, dict):
        raise http.failure(f"{label} device authorization", status, body, text)
    shown = http.trusted_http_url(body.get("verification_uri_complete")) or http.trusted_http_url(
        body.get("verification_uri")
    )
    if (
        not isinstance(body.get("device_code"), str)
        or not isinstance(body.get("user_code"), str)
        or not shown
    ):
        raise OAuthError(f"Invalid {label} device authorization response")
    interaction.notify({"type": "device_code", "userCode": body["user_code"], "verificationUri": shown})

    def poll() -> tuple[str, Any]:
        form = {"grant_type": DEVICE_GRANT, "client_id": client_id, "device_code": body["device_code"]}
        status, answer, text = http.request("POST", token_url, form=form)
        answer = answer if isinstance(answer, dict) else {}
        if 200 <= status < 300 and isinstance(answer.get("access_token"), str) and answer["access_token"]:
            return "complete", answer
        error = answer.get("error")
        if error == "authorization_pending":
            return "pending", None
        if error == "slow_down":
            return "slow_down", http.positive_number(answer.get("interval"))
        if error in ("access_denied", "authorization_denied"):
            return "failed", f"{label} login was denied"
        if error == "expired_token":
            return "failed", f"{label} device authorization expired; start the login again"
        return "failed", str(http.failure(f"{label} device token request", status, answer, text))

    return poll_device(
        interaction,
        poll,
        http.positive_number(body.get("interval")),
        http.positive_number(body.get("expires_in")) or 15 * 60,
        wait_first=True,
    )


def _token_entry(
    label: str,
    body: Any,
    previous_refresh: str | None = None,
    default_lifetime: float | None = None,
    skew_ms: int = 0,
) -> dict[str, Any]:
    access = http.string_field(body, "access_token", label)
    if body.get("refresh_token") is None and previous_refresh:
        refresh = previous_refresh  # not rotated
    else:
        refresh = http.string_field(body, "refresh_token", label)
    lifetime = (
        http.positive_number(body.get("expires_in"))
        if body.get("expires_in") is not None
        else default_lifetime
    )
    if lifetime is None:
        raise OAuthError(f"{label}: the answer has no valid expires_in")
    return {
        "type": "oauth",
        "access": access,
        "refresh": refresh,
        "expires": int(_now_ms() + lifetime * 1000 - skew_ms),
    }


def login_kimi(interaction: Interaction) -> dict[str, Any]:
    host = _kimi_host()
    start = {"client_id": KIMI_CLIENT_ID}
    body = _rfc8628(
        interaction,
        "Kimi Code",
        f"{host}/api/oauth/device_authorization",
        f"{host}/api/oauth/token",
        start,
        KIMI_CLIENT_ID,
    )
    return _token_entry("Kimi Code token poll", body)


def refresh_kimi(entry: dict[str, Any]) -> dict[str, Any]:
    form = {
        "client_id": KIMI_CLIENT_ID,
        "grant_type": "refresh_token",
        "refresh_token": str(entry.get("refresh") or ""),
    }
    status, body, text = http.request(
        "POST", http.endpoint(f"{_kimi_host()}/api/oauth/token", token=True), form=form
    )
    if not 200 <= status < 300:
        raise http.failure("Kimi Code token refresh", status, body, text)
    return {**entry, **_token_entry("Kimi Code token refresh", body)}


XAI_TOKEN_URL = "https://auth.x.ai/oauth2/token"


def login_xai(interaction: Interaction) -> dict[str, Any]:
    start = {"client_id": XAI_CLIENT_ID, "scope": XAI_SCOPE, "referrer": "pi"}
    url = http.endpoint("https://auth.x.ai/oauth2/device/code")
    body = _rfc8628(interaction, "xAI", url, http.endpoint(XAI_TOKEN_URL), start, XAI_CLIENT_ID)
    return _token_entry("xAI token", body, default_lifetime=3600, skew_ms=5 * 60 * 1000)


def refresh_xai(entry: dict[str, Any]) -> dict[str, Any]:
    previous = str(entry.get("refresh") or "")
    form = {"grant_type": "refresh_token", "client_id": XAI_CLIENT_ID, "refresh_token": previous}
    status, body, text = http.request("POST", http.endpoint(XAI_TOKEN_URL, token=True), form=form)
    if not 200 <= status < 300:
        raise http.failure("token refresh", status, body, text)
    return {**entry, **_token_entry("xAI token refresh", body, previous, 3600, 5 * 60 * 1000)}


def _meta_mint(identity: str) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {identity}", "x-api-version": "1.0.0"}
    status, body, text = http.request(
        "POST", http.endpoint("https://api.meta.ai/muse-code/key"), json_body={}, headers=headers
    )
    if status in (401, 403):
        raise OAuthError(f"Meta session expired (HTTP {status}); log in to meta again")
    if not 200 <= status < 300:
        raise http.failure("Meta API key mint", status, body, text)
    key = body.get("api_key") if isinstance(body, dict) else None
    if not isinstance(key, str) or not key:
        raise OAuthError("Meta did not issue an API key")
    return {"type": "oauth", "refresh": identity, "access": key, "expires": _now_ms() + 24 * 3600 * 1000}


def login_meta(interaction: Interaction) -> dict[str, Any]:
    start = {"client_id": META_CLIENT_ID}
    auth = "https://auth.meta.com/oidc/device"
    body = _rfc8628(
        interaction,
        "Meta",
        http.endpoint(f"{auth}/authorization/"),
        http.endpoint(f"{auth}/token/"),
        start,
        META_CLIENT_ID,
    )
    interaction.notify({"type": "progress", "message": "Enabling Meta Model API access..."})
    return _meta_mint(body["access_token"])


# --- OpenRouter: a permanent key through PKCE ------------------------------------------------------


def login_openrouter(interaction: Interaction) -> dict[str, Any]:
    verifier, challenge = http.pkce()
    # OpenRouter sends no state: the random path keeps stray requests from finishing the sign-in.
    server = start_callback_server("OpenRouter", 0, f"/oauth/callback/{uuid.uuid4()}", None)
    query = {
        "callback_url": server.redirect_uri,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    url = http.endpoint("https://openrouter.ai/auth") + "?" + urllib.parse.urlencode(query)
    interaction.notify(
        {
            "type": "auth_url",
            "url": url,
            "instructions": "Complete sign-in in your browser, or paste the final redirect URL here.",
        }
    )
    try:
        kind, value = wait_for_callback_or_paste(
            interaction, server, "Complete sign-in in your browser, or paste the authorization code / redirect URL here",
            server.redirect_uri, timeout_s=5 * 60,
        )  # fmt: skip
    finally:
        server.close()
    code = value.get("code") if kind == "callback" else parse_pasted(value)[0]
    if not code:
        raise OAuthError("Missing authorization code")
    payload = {"code": code, "code_verifier": verifier, "code_challenge_method": "S256"}
    status, body, text = http.request(
        "POST", http.endpoint("https://openrouter.ai/api/v1/auth/keys"), json_body=payload
    )
    if not 200 <= status < 300:
        raise http.failure("OpenRouter OAuth key exchange", status, body, text)
    key = body.get("key") if isinstance(body, dict) else None
    if not isinstance(key, str) or not key:
        raise OAuthError('OpenRouter OAuth response carries no "key"')
    return {"type": "oauth", "access": key, "refresh": "", "expires": NEVER_EXPIRES}


# --- the table -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OAuthProvider:
    name: str
    login: Callable[[Interaction], dict[str, Any]]
    refresh: Callable[[dict[str, Any]], dict[str, Any]]


PROVIDERS: dict[str, OAuthProvider] = {
    "openai-codex": OAuthProvider("OpenAI (ChatGPT Plus/Pro)", openai.login_codex, openai.refresh_codex),
    "openai": OAuthProvider("OpenAI (ChatGPT subscription)", openai.login_chatgpt, openai.refresh_chatgpt),
    "github-copilot": OAuthProvider("GitHub Copilot", login_copilot, refresh_copilot),
    "kimi-coding": OAuthProvider("Kimi Code (subscription)", login_kimi, refresh_kimi),
    "xai": OAuthProvider("xAI (Grok/X subscription)", login_xai, refresh_xai),
    "meta": OAuthProvider(
        "Meta (Muse subscription)",
        login_meta,
        lambda entry: {**entry, **_meta_mint(str(entry.get("refresh") or ""))},
    ),
    "openrouter": OAuthProvider("OpenRouter", login_openrouter, lambda entry: entry),
    "radius": OAuthProvider("Radius", radius.login, radius.refresh),
}
