"""What the MCP OAuth modules share: pi's ``oauth`` object of a server entry (:class:`OAuthSettings`),
the sign-in constants and errors, and keeping secrets out of error lines."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pi_mcp.config import ServerConfig, resolve_value

CALLBACK_PATH = "/callback"
CLIENT_NAME = "pi"
LOGIN_TIMEOUT_S = 300.0
REFRESH_SKEW_MS = 30_000
"""Access tokens this close to their expiry are refreshed before they are sent."""
REQUEST_TIMEOUT_S = 30.0
PI_CLIENT_DOCUMENT = "https://pi.dev/oauth/client.json"
"""pi's Client ID Metadata Document (``clientRegistration: "cimd"``)."""


class SignInError(Exception):
    """A sign-in that cannot go on; the message is for the user."""


class SignInCancelled(SignInError):
    pass


@dataclass
class OAuthSettings:
    server: str
    client_id: str | None = None
    client_secret_value: str | None = None
    callback_port: int | None = None
    callback_url: str | None = None
    scope: str | None = None
    client_name: str | None = None
    registration: str = "auto"
    metadata_url: str | None = None

    @classmethod
    def of(cls, config: ServerConfig) -> OAuthSettings:
        raw = config.oauth
        return cls(
            server=config.name,
            client_id=raw.get("clientId") or None,
            client_secret_value=raw.get("clientSecret") or None,
            callback_port=raw.get("callbackPort"),
            callback_url=raw.get("callbackUrl"),
            scope=raw.get("scope") or None,
            client_name=raw.get("clientName"),
            registration=raw.get("clientRegistration") or "auto",
            metadata_url=raw.get("authServerMetadataUrl"),
        )

    def client_secret(self) -> str | None:
        """``clientSecret`` with ``${NAME}`` / ``!command`` resolved (only when it is needed)."""
        if self.client_secret_value is None:
            return None
        return resolve_value(self.server, "oauth", "clientSecret", self.client_secret_value) or None


def sign_in_hint(name: str, in_session: bool = False) -> str:
    how = f"/mcp login {name}" if in_session else f"pi mcp login {name}"
    return f'MCP server "{name}" needs sign-in: run {how}'


def scrub(text: str, *secrets: str | None) -> str:
    """``text`` with every secret in it replaced (error lines may quote server answers)."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


def state_secrets(state: dict[str, Any]) -> list[str]:
    tokens = state.get("tokens") if isinstance(state.get("tokens"), dict) else {}
    client = state.get("clientInformation") if isinstance(state.get("clientInformation"), dict) else {}
    return [
        str(v)
        for v in (tokens.get("access_token"), tokens.get("refresh_token"), client.get("client_secret"))
        if v
    ]
