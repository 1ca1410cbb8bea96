"""Refreshing OAuth tokens stored in ``auth.json`` (reference §3.10).

pi refreshes a stored OAuth credential when less than five minutes of it remain, under the
auth.json lock, re-checking the expiry once the lock is held (so concurrent processes refresh
only once), and writes the new credential back before the lock is released. A failed refresh is
an error for that provider: a stored credential owns its provider, so no environment key is
tried instead.

Refreshed here: every provider pi 1.6.0 signs in to with OAuth
(:data:`pi_host.config.oauth_providers.PROVIDERS`: ``openai-codex``, ``openai``,
``github-copilot``, ``kimi-coding``, ``xai``, ``meta``, ``openrouter``), each as pi refreshes it.
Anthropic subscription logins are not refreshed: Anthropic does not allow them for third-party
harnesses.

A refused refresh (a revoked or reused refresh token) leaves the stored credential as it was and
is reported in one line that asks to log in again; the refresh token is never part of it.
"""

from __future__ import annotations

import time
from typing import Any

from pi_host.config.oauth_http import TOKEN_URL_ENV, OAuthError

MINIMUM_VALIDITY_MS = 5 * 60 * 1000
__all__ = ["TOKEN_URL_ENV", "RefreshError", "can_refresh", "expires_soon", "refresh_stored"]

RefreshError = OAuthError
"""The old name: a refresh failure is an :class:`~pi_host.config.oauth_http.OAuthError`."""


def _now_ms() -> float:
    return time.time() * 1000


def expires_soon(entry: dict[str, Any], margin_ms: float = MINIMUM_VALIDITY_MS) -> bool:
    """Less than five minutes (``margin_ms``) left; an entry without a numeric ``expires`` never
    expires."""
    expires = entry.get("expires")
    if not isinstance(expires, (int, float)) or isinstance(expires, bool):
        return False
    return _now_ms() + margin_ms >= expires


def _without_tokens(text: str, entry: dict[str, Any]) -> str:
    """An authorization server may echo the token it refused: the stored ones are cut out."""
    for name in ("refresh", "access"):
        value = entry.get(name)
        if isinstance(value, str) and len(value) >= 4:
            text = text.replace(value, "…")
    return text


def can_refresh(provider: str) -> bool:
    from pi_host.config.oauth_providers import PROVIDERS

    return provider in PROVIDERS


def refresh_stored(path: str, provider: str, margin_ms: float = MINIMUM_VALIDITY_MS) -> dict[str, Any] | None:
    """Refresh ``provider``'s credential in the auth.json at ``path`` under its lock when it still
    expires soon (within ``margin_ms``: ``pi auth print-bearer-token --min-expiry``) once the lock
    is held; the new credential is written before the lock is released.
    Returns the credential now stored (None when it is no longer an OAuth credential); raises
    :class:`RefreshError` when the refresh fails (the stored credential is left as it was)."""
    from pi_host.config.json_files import update_json_file
    from pi_host.config.oauth_providers import PROVIDERS

    result: dict[str, Any] = {}

    def change(data: dict[str, Any]) -> None:
        current = data.get(provider)
        if not isinstance(current, dict) or current.get("type") != "oauth":
            return
        if expires_soon(current, margin_ms):
            try:
                current = PROVIDERS[provider].refresh(current)
            except OAuthError as exc:
                raise OAuthError(_without_tokens(str(exc), current)) from None
            data[provider] = current
        result["entry"] = current

    update_json_file(path, change, mode=0o600)
    return result.get("entry")
