"""Signing in with a ChatGPT plan, as pi 1.6.0 does (facts from its ``openai-codex`` and
``openai-chatgpt`` OAuth flows; the code is pi-host's).

* ``openai-codex`` (ChatGPT Plus/Pro through the Codex backend): OpenAI's public Codex client,
  PKCE, a browser flow with a callback server on port 1455 (or the pasted redirect URL / code when
  the port is taken or the browser is elsewhere), or OpenAI's device-code flow. The credential
  carries ``accountId`` (the ``chatgpt_account_id`` claim of the access token), which the Codex
  responses API sends as ``chatgpt-account-id``.
* ``openai`` (Sign in with ChatGPT for api.openai.com): a client registered per login
  (``dynamic_agent_client``; the callback names the issued ``client_id``), the
  ``chatgpt.tokens.use.direct`` scope, and an installation id (``deviceId`` in the global
  settings.json, shared with pi).
"""

from __future__ import annotations

import secrets
import time
import urllib.parse
import uuid
from typing import Any

from pi_host.config import oauth_http as http
from pi_host.config.oauth_http import OAuthError
from pi_host.config.oauth_login import (
    Interaction,
    authorization_code,
    poll_device,
    start_callback_server,
    wait_for_callback_or_paste,
)

CODEX_CLIENT_ID = "app_EMoamEEZ73f0CkXaXp7hrann"
AUTH_BASE = "https://auth.openai.com"
CODEX_AUTHORIZE_URL = f"{AUTH_BASE}/oauth/authorize"
CODEX_TOKEN_URL = f"{AUTH_BASE}/oauth/token"
CODEX_REDIRECT_URI = "http://localhost:1455/auth/callback"
CODEX_DEVICE_USER_CODE_URL = f"{AUTH_BASE}/api/accounts/deviceauth/usercode"
CODEX_DEVICE_TOKEN_URL = f"{AUTH_BASE}/api/accounts/deviceauth/token"
CODEX_DEVICE_VERIFICATION_URI = f"{AUTH_BASE}/codex/device"
CODEX_DEVICE_REDIRECT_URI = f"{AUTH_BASE}/deviceauth/callback"
CODEX_SCOPE = "openid profile email offline_access"
CODEX_DEVICE_TIMEOUT_S = 15 * 60
ACCOUNT_CLAIM = "https://api.openai.com/auth"

CHATGPT_AUTHORIZE_URL = f"{AUTH_BASE}/api/accounts/authorize"
CHATGPT_TOKEN_URL = f"{AUTH_BASE}/api/accounts/oauth/token"
CHATGPT_REDIRECT_URI = "http://127.0.0.1:1455/auth/callback"
CHATGPT_RESOURCE = "https://api.openai.com/v1"
DIRECT_SCOPE = "chatgpt.tokens.use.direct"
CHATGPT_SCOPE = f"openid profile email offline_access resource.invoke {DIRECT_SCOPE}"
CHATGPT_EXPIRY_MARGIN_MS = 3 * 60 * 1000  # a request never starts with a token about to expire


def _now_ms() -> int:
    return int(time.time() * 1000)


# --- openai-codex ----------------------------------------------------------------------------------


def account_id(access: str) -> str:
    claims = http.jwt_claims(access) or {}
    auth = claims.get(ACCOUNT_CLAIM)
    value = auth.get("chatgpt_account_id") if isinstance(auth, dict) else None
    if not isinstance(value, str) or not value:
        raise OAuthError("Failed to extract accountId from token")
    return value


def _codex_tokens(status: int, body: Any, text: str, action: str) -> dict[str, Any]:
    if not 200 <= status < 300:
        raise http.failure(f"OpenAI Codex token {action}", status, body, text)
    if not isinstance(body, dict) or not body.get("access_token") or not body.get("refresh_token"):
        raise OAuthError(f"OpenAI Codex token {action}: the answer is missing fields")
    lifetime = body.get("expires_in")
    if isinstance(lifetime, bool) or not isinstance(lifetime, (int, float)):
        raise OAuthError(f"OpenAI Codex token {action}: the answer has no expires_in")
    access = str(body["access_token"])
    return {
        "type": "oauth",
        "access": access,
        "refresh": str(body["refresh_token"]),
        "expires": int(_now_ms() + lifetime * 1000),
        "accountId": account_id(access),
    }


def _codex_exchange(code: str, verifier: str, redirect_uri: str) -> dict[str, Any]:
    form = {
        "grant_type": "authorization_code",
        "client_id": CODEX_CLIENT_ID,
        "code": code,
        "code_verifier": verifier,
        "redirect_uri": redirect_uri,
    }
    return _codex_tokens(*http.request("POST", http.endpoint(CODEX_TOKEN_URL), form=form), "exchange")


def refresh_codex(entry: dict[str, Any]) -> dict[str, Any]:
    form = {
        "grant_type": "refresh_token",
        "refresh_token": str(entry.get("refresh") or ""),
        "client_id": CODEX_CLIENT_ID,
    }
    fresh = _codex_tokens(
        *http.request("POST", http.endpoint(CODEX_TOKEN_URL, token=True), form=form), "refresh"
    )
    return {**entry, **fresh}


def login_codex_browser(interaction: Interaction) -> dict[str, Any]:
    verifier, challenge = http.pkce()
    state = secrets.token_hex(16)
    try:  # port 1455 is shared with the Codex CLI: when taken, only the pasted URL works
        server = start_callback_server("OpenAI", 1455, "/auth/callback", state)
    except OSError:
        server = None
    redirect_uri = CODEX_REDIRECT_URI if server is None or server.port == 1455 else server.redirect_uri
    query = {
        "response_type": "code",
        "client_id": CODEX_CLIENT_ID,
        "redirect_uri": redirect_uri,
        "scope": CODEX_SCOPE,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": state,
        "id_token_add_organizations": "true",
        "codex_cli_simplified_flow": "true",
        "originator": "pi",
    }
    url = http.endpoint(CODEX_AUTHORIZE_URL) + "?" + urllib.parse.urlencode(query)
    interaction.notify(
        {
            "type": "auth_url",
            "url": url,
            "instructions": "A browser window should open. Complete login to finish.",
        }
    )
    try:
        kind, value = wait_for_callback_or_paste(
            interaction,
            server,
            "Complete login in your browser, or paste the authorization code / redirect URL here",
            redirect_uri,
        )
    finally:
        if server:
            server.close()
    return _codex_exchange(authorization_code(kind, value, state), verifier, redirect_uri)


def login_codex_device(interaction: Interaction) -> dict[str, Any]:
    status, body, text = http.request(
        "POST", http.endpoint(CODEX_DEVICE_USER_CODE_URL), json_body={"client_id": CODEX_CLIENT_ID}
    )
    if status == 404:
        raise OAuthError(
            "OpenAI Codex device code login is not enabled for this server; use the browser login"
        )
    if not 200 <= status < 300:
        raise http.failure("OpenAI Codex device code request", status, body, text)
    device_id = body.get("device_auth_id") if isinstance(body, dict) else None
    user_code = body.get("user_code") if isinstance(body, dict) else None
    interval = http.positive_number(body.get("interval")) if isinstance(body, dict) else None
    if not device_id or not user_code:
        raise OAuthError("Invalid OpenAI Codex device code response")
    interaction.notify({
        "type": "device_code",
        "userCode": user_code,
        "verificationUri": CODEX_DEVICE_VERIFICATION_URI,
    })  # fmt: skip

    def poll() -> tuple[str, Any]:
        payload = {"device_auth_id": device_id, "user_code": user_code}
        status, body, text = http.request("POST", http.endpoint(CODEX_DEVICE_TOKEN_URL), json_body=payload)
        if 200 <= status < 300:
            if (
                not isinstance(body, dict)
                or not body.get("authorization_code")
                or not body.get("code_verifier")
            ):
                return "failed", "Invalid OpenAI Codex device auth token response"
            return "complete", (body["authorization_code"], body["code_verifier"])
        if status in (403, 404):
            return "pending", None
        error = body.get("error") if isinstance(body, dict) else None
        code = error.get("code") if isinstance(error, dict) else error
        if code == "deviceauth_authorization_pending":
            return "pending", None
        if code == "slow_down":
            return "slow_down", None
        return "failed", str(http.failure("OpenAI Codex device auth", status, body, text))

    code, verifier = poll_device(interaction, poll, interval, CODEX_DEVICE_TIMEOUT_S)
    return _codex_exchange(code, verifier, CODEX_DEVICE_REDIRECT_URI)


def login_codex(interaction: Interaction) -> dict[str, Any]:
    method = interaction.select(
        "Select OpenAI Codex login method",
        [("browser", "Browser login (default)"), ("device_code", "Device code login (headless)")],
    )
    if method == "device_code":
        return login_codex_device(interaction)
    if method != "browser":
        raise OAuthError("Login cancelled")
    return login_codex_browser(interaction)


# --- openai (Sign in with ChatGPT) -------------------------------------------------------------------


def _chatgpt_credential(status: int, body: Any, text: str, client_id: str, action: str) -> dict[str, Any]:
    if not 200 <= status < 300:
        raise http.failure(f"OpenAI OAuth token {action}", status, body, text)
    where = f"OpenAI OAuth token {action}"
    access = http.string_field(body, "access_token", where)
    refresh = http.string_field(body, "refresh_token", where)
    scopes = http.string_field(body, "scope", where).split()
    lifetime = (
        http.positive_number(body.get("expires_in")) if not isinstance(body.get("expires_in"), str) else None
    )
    if lifetime is None:
        raise OAuthError(f"{where}: the answer has no valid expires_in")
    if DIRECT_SCOPE not in scopes:
        raise OAuthError(f"the grant does not include {DIRECT_SCOPE}")
    return {
        "type": "oauth",
        "access": access,
        "refresh": refresh,
        "expires": int(_now_ms() + lifetime * 1000 - CHATGPT_EXPIRY_MARGIN_MS),
        "clientId": client_id,
        "scopes": scopes,
    }


def refresh_chatgpt(entry: dict[str, Any]) -> dict[str, Any]:
    client_id = entry.get("clientId")
    if not isinstance(client_id, str) or not client_id.strip():
        raise OAuthError("the stored credential has no issued clientId; sign in with ChatGPT again")
    form = {
        "grant_type": "refresh_token",
        "client_id": client_id,
        "refresh_token": str(entry.get("refresh") or ""),
        "resource": CHATGPT_RESOURCE,
    }
    answer = http.request("POST", http.endpoint(CHATGPT_TOKEN_URL, token=True), form=form)
    return {**entry, **_chatgpt_credential(*answer, client_id, "refresh")}


def device_id() -> str:
    """The installation id pi keeps as ``deviceId`` in the global settings.json (created once,
    under the file's lock, so pi and pi-host name the same installation)."""
    import os

    from pi_host.config import paths
    from pi_host.config.json_files import update_json_file

    found: dict[str, str] = {}

    def change(data: dict[str, Any]) -> None:
        if not isinstance(data.get("deviceId"), str) or not data["deviceId"]:
            data["deviceId"] = str(uuid.uuid4())
        found["id"] = data["deviceId"]

    update_json_file(os.path.join(paths.agent_dir(), "settings.json"), change)
    return found["id"]


def login_chatgpt(interaction: Interaction) -> dict[str, Any]:
    try:
        host_id = f"urn:uuid:{uuid.UUID(device_id())}"
    except ValueError:
        raise OAuthError("Sign in with ChatGPT requires a device id (UUID) in settings.json") from None
    verifier, challenge = http.pkce()
    state, nonce = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    try:
        server = start_callback_server("ChatGPT", 1455, "/auth/callback", state)
    except OSError:
        raise OAuthError(
            "Port 1455 is in use, probably by an unfinished login in another pi session or by the Codex CLI."
            " Cancel that login and try again."
        ) from None
    redirect_uri = CHATGPT_REDIRECT_URI if server.port == 1455 else server.redirect_uri
    query = {
        "client_id": "dynamic_agent_client",
        "agent_name_hint": "Pi",
        "ext_agent_host_id": host_id,
        "response_type": "code",
        "redirect_uri": redirect_uri,
        "resource": CHATGPT_RESOURCE,
        "scope": CHATGPT_SCOPE,
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "nonce": nonce,
    }
    url = http.endpoint(CHATGPT_AUTHORIZE_URL) + "?" + urllib.parse.urlencode(query)
    interaction.notify({
        "type": "auth_url",
        "url": url,
        "instructions": "Complete sign-in in your browser. If the callback does not complete, paste the final redirect URL here.",
    })  # fmt: skip
    try:
        kind, value = wait_for_callback_or_paste(
            interaction,
            server,
            "Complete login in your browser, or paste the final redirect URL here",
            redirect_uri,
        )
    finally:
        server.close()
    if kind == "manual":
        pasted = urllib.parse.urlsplit(value.strip())
        expected = urllib.parse.urlsplit(redirect_uri)
        if (pasted.scheme, pasted.netloc, pasted.path) != (expected.scheme, expected.netloc, expected.path):
            raise OAuthError(f"The pasted callback URL must start with {redirect_uri}")
        value = {k: v[0] for k, v in urllib.parse.parse_qs(pasted.query).items()}
        if value.get("error"):
            raise OAuthError(f"ChatGPT authorization failed: {value['error']}")
    if not value.get("code"):
        raise OAuthError("Missing authorization code")
    if value.get("state") != state:
        raise OAuthError("OAuth state mismatch")
    client_id = (value.get("client_id") or "").strip()
    if not client_id:
        raise OAuthError("OpenAI OAuth registration callback did not contain an issued client ID")
    interaction.notify({"type": "progress", "message": "Exchanging authorization code for tokens..."})
    form = {
        "grant_type": "authorization_code",
        "client_id": client_id,
        "code": value["code"],
        "code_verifier": verifier,
        "redirect_uri": redirect_uri,
        "resource": CHATGPT_RESOURCE,
    }
    status, body, text = http.request("POST", http.endpoint(CHATGPT_TOKEN_URL), form=form)
    if 200 <= status < 300 and not (
        isinstance(body, dict) and isinstance(body.get("id_token"), str) and body["id_token"].strip()
    ):
        raise OAuthError("OpenAI OAuth token response did not contain an ID token")
    return _chatgpt_credential(status, body, text, client_id, "exchange")
