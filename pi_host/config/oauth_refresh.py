"""Refreshing OAuth tokens stored in ``auth.json`` (reference §3.10).

pi refreshes a stored OAuth credential when less than five minutes of it remain, under the
auth.json lock, re-checking the expiry once the lock is held (so concurrent processes refresh
only once), and writes the new credential back before the lock is released. A failed refresh is
an error for that provider: a stored credential owns its provider, so no environment key is
tried instead.

Refreshed here, for the providers pi-host ships and pi 1.6.0 signs in to with OAuth:

* ``openai`` (Sign in with ChatGPT): ``refresh_token`` grant with the credential's issued
  ``clientId`` and ``resource=https://api.openai.com/v1``; the answer must carry
  ``access_token``, ``refresh_token``, ``scope`` and a positive ``expires_in``; the new expiry is
  three minutes early.
* ``xai`` (SuperGrok / X Premium device login): ``refresh_token`` grant with pi's public client
  id; a missing ``refresh_token`` keeps the old one, a missing ``expires_in`` means an hour; the
  new expiry is five minutes early.
* ``openrouter``: the OAuth login yields a non-expiring key, so a refresh keeps the credential.

Anthropic subscription logins are not refreshed: Anthropic does not allow them for third-party
harnesses.

Test hook: ``PI_HOST_OAUTH_TOKEN_URL`` replaces every token endpoint (pi has no such setting;
tests point it at a loopback server).
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

MINIMUM_VALIDITY_MS = 5 * 60 * 1000
REFRESH_TIMEOUT_S = 15
TOKEN_URL_ENV = "PI_HOST_OAUTH_TOKEN_URL"

_OPENAI_TOKEN_URL = "https://auth.openai.com/api/accounts/oauth/token"
_OPENAI_RESOURCE = "https://api.openai.com/v1"
_OPENAI_DIRECT_SCOPE = "chatgpt.tokens.use.direct"
_XAI_TOKEN_URL = "https://auth.x.ai/oauth2/token"
_XAI_CLIENT_ID = "b1a00492-073a-47ea-816f-4c329264a828"


class RefreshError(Exception):
    pass


def _now_ms() -> float:
    return time.time() * 1000


def expires_soon(entry: dict[str, Any]) -> bool:
    """Less than five minutes left (an entry without a numeric ``expires`` never expires)."""
    expires = entry.get("expires")
    if not isinstance(expires, (int, float)) or isinstance(expires, bool):
        return False
    return _now_ms() + MINIMUM_VALIDITY_MS >= expires


def _post_form(url: str, fields: dict[str, str]) -> tuple[int, dict[str, Any]]:
    url = os.environ.get(TOKEN_URL_ENV) or url
    request = urllib.request.Request(
        url,
        data=urllib.parse.urlencode(fields).encode(),
        method="POST",
        headers={"accept": "application/json", "content-type": "application/x-www-form-urlencoded"},
    )
    try:
        with urllib.request.urlopen(request, timeout=REFRESH_TIMEOUT_S) as response:  # noqa: S310
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    except (OSError, ValueError) as exc:
        raise RefreshError(str(exc)) from exc
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        raise RefreshError(f"token endpoint returned invalid JSON (HTTP {status})") from None
    return status, body if isinstance(body, dict) else {}


def _text(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not value.strip():
        raise RefreshError(f"token response has no valid {name}")
    return value


def _lifetime(body: dict[str, Any], default: float | None) -> float:
    value = body.get("expires_in", default)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise RefreshError("token response has no valid expires_in")
    return float(value)


def _failure(status: int, body: dict[str, Any]) -> RefreshError:
    detail = ": ".join(str(body[k]) for k in ("error", "error_description") if isinstance(body.get(k), str))
    return RefreshError(f"token refresh failed (HTTP {status})" + (f": {detail}" if detail else ""))


def _refresh_openai(entry: dict[str, Any]) -> dict[str, Any]:
    client_id = entry.get("clientId")
    if not isinstance(client_id, str) or not client_id.strip():
        raise RefreshError("the stored credential has no issued clientId; sign in with ChatGPT again")
    fields = {
        "grant_type": "refresh_token",
        "client_id": client_id,
        "refresh_token": str(entry.get("refresh") or ""),
        "resource": _OPENAI_RESOURCE,
    }
    status, body = _post_form(_OPENAI_TOKEN_URL, fields)
    if not 200 <= status < 300:
        raise _failure(status, body)
    scopes = _text(body, "scope").split()
    if _OPENAI_DIRECT_SCOPE not in scopes:
        raise RefreshError(f"the grant does not include {_OPENAI_DIRECT_SCOPE}")
    return {
        **entry,
        "type": "oauth",
        "access": _text(body, "access_token"),
        "refresh": _text(body, "refresh_token"),
        "expires": int(_now_ms() + _lifetime(body, None) * 1000 - 3 * 60 * 1000),
        "clientId": client_id,
        "scopes": scopes,
    }


def _refresh_xai(entry: dict[str, Any]) -> dict[str, Any]:
    previous = str(entry.get("refresh") or "")
    fields = {"grant_type": "refresh_token", "client_id": _XAI_CLIENT_ID, "refresh_token": previous}
    status, body = _post_form(_XAI_TOKEN_URL, fields)
    if not 200 <= status < 300:
        raise _failure(status, body)
    refresh = previous if body.get("refresh_token") is None and previous else _text(body, "refresh_token")
    return {
        **entry,
        "type": "oauth",
        "access": _text(body, "access_token"),
        "refresh": refresh,
        "expires": int(_now_ms() + _lifetime(body, 3600) * 1000 - 5 * 60 * 1000),
    }


REFRESHERS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "openai": _refresh_openai,
    "xai": _refresh_xai,
    "openrouter": lambda entry: entry,
}


def can_refresh(provider: str) -> bool:
    return provider in REFRESHERS


def refresh_stored(path: str, provider: str) -> dict[str, Any] | None:
    """Refresh ``provider``'s credential in the auth.json at ``path`` under its lock when it still
    expires soon once the lock is held; the new credential is written before the lock is released.
    Returns the credential now stored (None when it is no longer an OAuth credential); raises
    :class:`RefreshError` when the refresh fails (the stored credential is left as it was)."""
    from pi_host.config.json_files import update_json_file

    result: dict[str, Any] = {}

    def change(data: dict[str, Any]) -> None:
        current = data.get(provider)
        if not isinstance(current, dict) or current.get("type") != "oauth":
            return
        if expires_soon(current):
            current = REFRESHERS[provider](current)
            data[provider] = current
        result["entry"] = current

    update_json_file(path, change, mode=0o600)
    return result.get("entry")
