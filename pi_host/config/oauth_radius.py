"""Signing in to the Radius gateway as pi 1.6.0 does (facts from pi-ai's Radius OAuth flow; the
code is pi-host's).

The OAuth client APIs live on the gateway (``https://radius.pi.dev``): ``/v1/oauth`` names the
browser authorization endpoint, ``/v1/oauth/token`` issues and refreshes tokens,
``/v1/oauth/device`` starts a device authorization. Client ``pi-gateway``, scope
``gateway offline_access``. The browser sign-in uses PKCE and a callback on
``http://127.0.0.1:1456/oauth/callback``; pi-host also takes the pasted redirect URL, as in its
other browser sign-ins, so a taken port or a browser on another machine still works. The stored
credential is pi's: ``{"type": "oauth", "access", "refresh", "expires", "scope"}``, ``expires``
one minute before the token's own end.
"""

from __future__ import annotations

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

GATEWAY = "https://radius.pi.dev"
CLIENT_ID = "pi-gateway"
SCOPE = "gateway offline_access"
CALLBACK_PORT = 1456
CALLBACK_PATH = "/oauth/callback"
REDIRECT_URI = f"http://127.0.0.1:{CALLBACK_PORT}{CALLBACK_PATH}"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
EXPIRY_SKEW_MS = 60_000


def _url(path: str, *, token: bool = False) -> str:
    return http.endpoint(GATEWAY + path, token=token)


def _credential(body: Any, previous: dict[str, Any] | None = None) -> dict[str, Any]:
    access = http.string_field(body, "access_token", "Radius OAuth token request")
    lifetime = http.positive_number(body.get("expires_in"))
    if lifetime is None:
        raise OAuthError("Radius OAuth token request: the answer has no valid expires_in")
    refresh = body.get("refresh_token")
    if not isinstance(refresh, str) or not refresh:
        # pi stores what the answer holds; keeping the previous token when none is rotated in
        # lets the next refresh work all the same.
        refresh = (previous or {}).get("refresh")
    entry: dict[str, Any] = {"type": "oauth", "access": access}
    if isinstance(refresh, str) and refresh:
        entry["refresh"] = refresh
    entry["expires"] = int(time.time() * 1000 + lifetime * 1000 - EXPIRY_SKEW_MS)
    if isinstance(body.get("scope"), str):
        entry["scope"] = body["scope"]
    return entry


def _token(form: dict[str, str]) -> tuple[int, Any, str]:
    return http.request(
        "POST", _url("/v1/oauth/token", token=form["grant_type"] == "refresh_token"), form=form
    )


def _exchange(form: dict[str, str], previous: dict[str, Any] | None = None) -> dict[str, Any]:
    status, body, text = _token(form)
    if not 200 <= status < 300 or not isinstance(body, dict):
        raise http.failure("Radius OAuth token request", status, body, text)
    return _credential(body, previous)


def login_browser(interaction: Interaction) -> dict[str, Any]:
    status, body, text = http.request("GET", _url("/v1/oauth"))
    if not 200 <= status < 300:
        raise http.failure(f"Loading the Radius OAuth config from {GATEWAY}", status, body, text)
    authorize = http.trusted_http_url(body.get("authorizationEndpoint") if isinstance(body, dict) else None)
    if not authorize:
        raise OAuthError(f"Invalid Radius OAuth config from {GATEWAY}")
    verifier, challenge = http.pkce()
    state = str(uuid.uuid4())
    try:
        server = start_callback_server("Radius", CALLBACK_PORT, CALLBACK_PATH, state)
    except OSError:
        server = None  # the port is taken: the pasted redirect URL still finishes the sign-in
    redirect_uri = REDIRECT_URI if server is None or server.port == CALLBACK_PORT else server.redirect_uri
    query = {
        "response_type": "code",
        "client_id": CLIENT_ID,
        "redirect_uri": redirect_uri,
        "scope": SCOPE,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "handoff": "url",
        "state": state,
    }
    parts = urllib.parse.urlsplit(authorize)
    url = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, urllib.parse.urlencode(query), ""))
    interaction.notify({"type": "progress", "message": f"Listening for OAuth callback on {redirect_uri}"})
    interaction.notify({"type": "auth_url", "url": url, "instructions": "Continue in your browser."})
    try:
        kind, value = wait_for_callback_or_paste(
            interaction, server, "Continue in your browser, or paste the redirect URL here", redirect_uri
        )
    finally:
        if server is not None:
            server.close()
    code = authorization_code(kind, value, state)
    form = {
        "grant_type": "authorization_code",
        "client_id": CLIENT_ID,
        "redirect_uri": redirect_uri,
        "code": code,
        "code_verifier": verifier,
    }
    return _exchange(form)


def login_device(interaction: Interaction) -> dict[str, Any]:
    form = {"client_id": CLIENT_ID, "scope": SCOPE}
    status, body, text = http.request("POST", _url("/v1/oauth/device"), form=form)
    if not 200 <= status < 300 or not isinstance(body, dict):
        raise http.failure("Radius OAuth device authorization", status, body, text)
    if not all(body.get(name) for name in ("device_code", "user_code", "verification_uri", "expires_in")):
        raise OAuthError("Radius OAuth device authorization response is missing required fields")
    verification = http.trusted_http_url(body["verification_uri"])
    if not verification:
        raise OAuthError("Untrusted verification_uri in Radius OAuth device authorization response")
    interval = http.positive_number(body.get("interval"))
    expires_in = http.positive_number(body.get("expires_in"))
    notice = {"type": "device_code", "userCode": body["user_code"], "verificationUri": verification}
    if interval is not None:
        notice["intervalSeconds"] = interval
    notice["expiresInSeconds"] = expires_in
    interaction.notify(notice)

    def poll() -> tuple[str, Any]:
        fields = {"grant_type": DEVICE_GRANT, "client_id": CLIENT_ID, "device_code": str(body["device_code"])}
        status, answer, text = _token(fields)
        if 200 <= status < 300 and isinstance(answer, dict):
            return "complete", _credential(answer)
        error = answer.get("error") if isinstance(answer, dict) else None
        if error == "authorization_pending":
            return "pending", None
        if error == "slow_down":
            return "slow_down", None
        if error == "expired_token":
            return "failed", "Device authorization expired."
        if error == "access_denied":
            return "failed", "Device authorization was denied."
        raise http.failure("Radius OAuth token request", status, answer, text)

    return poll_device(interaction, poll, interval, expires_in)


def login(interaction: Interaction) -> dict[str, Any]:
    method = interaction.select(
        "Sign in to Radius:",
        [
            ("browser", "Sign in with browser (recommended)"),
            ("device-code", "Sign in with device code (when signing in from another device)"),
        ],
    )
    if method == "device-code":
        return login_device(interaction)
    if method == "browser":
        return login_browser(interaction)
    raise OAuthError("Login cancelled")


def refresh(entry: dict[str, Any]) -> dict[str, Any]:
    form = {
        "grant_type": "refresh_token",
        "client_id": CLIENT_ID,
        "refresh_token": str(entry.get("refresh") or ""),
    }
    return {**entry, **_exchange(form, entry)}
