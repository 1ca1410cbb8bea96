"""OAuth for streamable-HTTP MCP servers: the two halves of sign-in, over pi's credential file
(:mod:`pi_mcp.credentials`).

* :func:`connection_auth` is the ``httpx2.Auth`` of a connection. It sends the stored access token
  and refreshes it (when it is about to expire, or after a 401) with the stored refresh token, but
  never starts a browser flow: when signing in is the only way on it sets ``needs_sign_in`` and
  lets the 401 through, so the connection reports "needs sign-in".
* :func:`sign_in` is ``pi mcp login`` / ``/mcp login``: discovery (RFC 9728 protected resource
  metadata, then RFC 8414 authorization-server metadata, or the configured
  ``authServerMetadataUrl``), a configured client or dynamic client registration, the
  authorization-code flow with PKCE against a loopback callback (or a pasted redirect URL), and
  the token exchange.

The protocol steps are the SDK's (``mcp.client.auth``: its ``OAuthClientProvider`` builds the
requests and checks the answers); this module decides when they run and stores what they return.
Nothing here imports the SDK until an HTTP server needs it. No token or secret is ever logged or
put in an error line.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from pi_mcp.config import ServerConfig
from pi_mcp.credentials import CredentialStore
from pi_mcp.oauth_callback import CallbackServer, open_browser, terminal_paste
from pi_mcp.oauth_settings import (
    LOGIN_TIMEOUT_S,
    OAuthSettings,
    SignInCancelled,
    SignInError,
    scrub,
    sign_in_hint,
    state_secrets,
)

__all__ = [
    "LOGIN_TIMEOUT_S",
    "CallbackServer",
    "OAuthSettings",
    "SignInCancelled",
    "SignInError",
    "connection_auth",
    "open_browser",
    "scrub",
    "sign_in",
    "sign_in_hint",
    "state_secrets",
    "terminal_paste",
]
"""The sign-in API the MCP plugin's commands and connections use; the parts live in
:mod:`pi_mcp.oauth_settings`, :mod:`pi_mcp.oauth_callback` and :mod:`pi_mcp.oauth_provider`."""


_SDK: Any = None


def _sdk() -> Any:
    global _SDK
    if _SDK is None:
        from pi_mcp.oauth_provider import build_sdk_classes

        _SDK = build_sdk_classes()
    return _SDK


def connection_auth(config: ServerConfig, agent_dir: str | None = None) -> Any:
    """The ``httpx2.Auth`` of one connection to ``config``'s server (see the module docstring)."""
    return _sdk().Provider(config, CredentialStore(config.name, config.raw["url"], agent_dir))


async def sign_in(
    config: ServerConfig,
    *,
    show_url: Callable[[str], Any],
    paste: Callable[[Any], Awaitable[str | None]] | None = None,
    challenge: dict[str, str] | None = None,
    timeout: float = LOGIN_TIMEOUT_S,
    agent_dir: str | None = None,
) -> None:
    """Sign in to ``config``'s server and store the tokens. ``show_url`` gets the authorization URL
    (and opens it); ``paste(signal)`` may return a pasted redirect URL (None: none; raise
    :class:`SignInCancelled` to give up). Raises :class:`SignInError` or ``TimeoutError``."""
    store = CredentialStore(config.name, config.raw["url"], agent_dir)
    provider = _sdk().Provider(config, store)
    try:
        await asyncio.wait_for(provider.sign_in(show_url, paste, challenge or {}), timeout)
    except (SignInError, TimeoutError):
        raise
    except Exception as exc:  # the SDK's OAuth errors, HTTP errors, an unreadable file
        text = " ".join((str(exc) or type(exc).__name__).split())
        raise SignInError(scrub(text, *provider.secrets())) from None
