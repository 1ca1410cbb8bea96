"""OpenRouter's model list for one key (``GET <baseUrl>/models/user``), as pi 1.6.0 narrows it:
only the chat models the key may use, with the key's context window, output limit and prices
(OpenRouter reports $/token; pi's catalog holds $/1M tokens). A 401, 403 or 404 (a proxy set in
models.json that has no such endpoint) keeps the catalog as it is; any other failure is an error.
Stored and reused by :mod:`pi_host.config.model_store`.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from pi_host.config.model_store import TIMEOUT


def _per_million(value: Any, fallback: float) -> float:
    # Missing, invalid and negative prices (OpenRouter says -1 for routers such as
    # openrouter/auto, whose price depends on the model they pick) keep the fallback.
    try:
        per_token = float(value)
    except (TypeError, ValueError):
        return fallback
    return round(per_token * 1_000_000, 6) if per_token >= 0 else fallback


def cost(pricing: dict[str, Any]) -> dict[str, Any]:
    """OpenRouter's prices as pi's cost object; prompt-length overrides become tiers, time-of-day
    ones are skipped (a cost object cannot say them)."""
    base = {
        "input": _per_million(pricing.get("prompt"), 0),
        "output": _per_million(pricing.get("completion"), 0),
        "cacheRead": _per_million(pricing.get("input_cache_read"), 0),
        "cacheWrite": _per_million(pricing.get("input_cache_write"), 0),
    }
    tiers = []
    for override in pricing.get("overrides") or ():
        if not isinstance(override, dict) or "min_prompt_tokens" not in override:
            continue
        if any(k in override for k in ("utc_start", "utc_end", "utc_days")):
            continue
        tiers.append(
            {
                "inputTokensAbove": override["min_prompt_tokens"],
                "input": _per_million(override.get("prompt"), base["input"]),
                "output": _per_million(override.get("completion"), base["output"]),
                "cacheRead": _per_million(override.get("input_cache_read"), base["cacheRead"]),
                "cacheWrite": _per_million(override.get("input_cache_write"), base["cacheWrite"]),
            }
        )
    return {**base, "tiers": tiers} if tiers else base


def _fetch(base_url: str, key: str) -> Any:
    request = urllib.request.Request(
        base_url.rstrip("/") + "/models/user",
        headers={"accept": "application/json", "authorization": f"Bearer {key}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:  # noqa: S310 - the configured URL
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403, 404):
            return None
        raise RuntimeError(f"OpenRouter model list request failed: {exc.code}") from None
    except ValueError:
        raise RuntimeError("Invalid OpenRouter model list response") from None


def personalize(models: list[dict[str, Any]], base_url: str, key: str) -> list[dict[str, Any]]:
    body = _fetch(base_url, key)
    if body is None:
        return models
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        raise RuntimeError("Invalid OpenRouter model list response")
    allowed = {e["id"]: e for e in body["data"] if isinstance(e, dict) and isinstance(e.get("id"), str)}
    out = []
    for model in models:
        entry = allowed.get(model["id"])
        if entry is None:
            continue
        top = entry.get("top_provider") if isinstance(entry.get("top_provider"), dict) else {}
        # A missing limit comes as absent, null or 0: the catalog's value stays.
        window = top.get("context_length") or entry.get("context_length") or model.get("contextWindow")
        pricing = entry.get("pricing")
        out.append(
            {
                **model,
                "contextWindow": window,
                "maxTokens": top.get("max_completion_tokens") or model.get("maxTokens"),
                "cost": cost(pricing) if isinstance(pricing, dict) else model.get("cost"),
            }
        )
    return out
