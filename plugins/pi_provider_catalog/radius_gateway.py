"""The Radius gateway's model list for one account (``GET <gateway>/v1/config``), as pi 1.6.0
reads it: ``{"baseUrl": ..., "models": [...]}``, each model in pi's model shape. Radius
organisations can switch models off, so once known the list *replaces* the shipped catalog (pi's
baseline) instead of being laid over it. Every model gets ``api: "pi-messages"`` and the
``baseUrl`` the gateway names.

The gateway is the origin of the provider's base URL (``https://radius.pi.dev`` for the catalog's
``https://radius.pi.dev/v1``; a models.json ``baseUrl`` moves it), and pi resolves ``/v1/config``
against that origin too. Stored and reused by :mod:`pi_host.config.model_store` through
:func:`personalize`.
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Any

DEFAULT_GATEWAY = "https://radius.pi.dev"
API = "pi-messages"
TIMEOUT = 15.0  # model_store's refresh budget


class GatewayError(Exception):
    """The config could not be read; the text is pi's and names the gateway, never the key."""


def normalize_gateway(value: str) -> str:
    """A gateway as pi writes it: ``https://`` added when no scheme is given, no trailing slash."""
    with_scheme = value if re.match(r"(?i)^https?://", value) else f"https://{value}"
    return with_scheme.rstrip("/")


def gateway_for(base_url: str) -> str:
    """The gateway (scheme and host) behind a provider base URL."""
    if not base_url:
        return DEFAULT_GATEWAY
    parts = urllib.parse.urlsplit(normalize_gateway(base_url))
    return f"{parts.scheme}://{parts.netloc}"


def _is_model(value: Any) -> bool:
    # The fields pi requires before it accepts a gateway model; anything else is skipped.
    return (
        isinstance(value, dict)
        and isinstance(value.get("id"), str)
        and isinstance(value.get("name"), str)
        and isinstance(value.get("reasoning"), bool)
        and isinstance(value.get("input"), list)
        and isinstance(value.get("cost"), dict)
        and _number(value.get("contextWindow"))
        and _number(value.get("maxTokens"))
    )


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def sanitize_config(config: Any) -> dict[str, Any] | None:
    """``{"baseUrl", "models"}`` with the well-formed models only, or None when the answer is not
    a config at all."""
    if not isinstance(config, dict):
        return None
    base_url, models = config.get("baseUrl"), config.get("models")
    if not isinstance(base_url, str) or not isinstance(models, list):
        return None
    return {"baseUrl": base_url, "models": [dict(model) for model in models if _is_model(model)]}


def models_from_config(config: dict[str, Any]) -> list[dict[str, Any]]:
    """The gateway's models as catalog entries (pi's ``getRadiusModelsFromConfig``)."""
    return [{**model, "api": API, "baseUrl": config["baseUrl"]} for model in config["models"]]


def _truncate(body: str) -> str:
    trimmed = body.strip()
    return trimmed[:512] + "…" if len(trimmed) > 512 else trimmed


def load_config(gateway: str, key: str | None) -> dict[str, Any]:
    """The sanitized config; raises :class:`GatewayError` with pi's words on any failure."""
    from pi_host.config import oauth_http

    headers = {"accept": "application/json"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    url = urllib.parse.urljoin(gateway + "/", "/v1/config")
    try:
        status, body, text = oauth_http.request("GET", url, headers=headers, timeout=TIMEOUT)
    except oauth_http.OAuthError as exc:
        raise GatewayError(f"Could not load Radius config from {gateway}: {exc}") from None
    if not 200 <= status < 300:
        detail = oauth_http.safe_detail(_truncate(text), 512)
        raise GatewayError(f"Could not load Radius config from {gateway}: {status}: {detail}")
    config = sanitize_config(body)
    if config is None:
        raise GatewayError(f"Invalid Radius config from {gateway}")
    return config


def personalize(models: list[dict[str, Any]], base_url: str, key: str) -> list[dict[str, Any]]:
    """``ProviderInfo.personalize`` for Radius: the account's models from the gateway, replacing
    ``models`` (the shipped catalog) entirely."""
    del models  # replaced, not filtered: a model the organisation switched off must go
    return models_from_config(load_config(gateway_for(base_url), key))
