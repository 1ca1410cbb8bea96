"""Which models a GitHub Copilot account may use, as pi 1.6.0 reads them from ``<api>/models``.

An account lists models with ``model_picker_enabled`` and a ``policy.state`` (``enabled``,
``disabled``, ``unconfigured``); a model whose capabilities say no tool calls is left out. The
account may use the models with the picker on and a policy not ``disabled``. On the individual
plan's endpoint, an account that has none of those may use its ``enabled`` ones instead.

Some models (Claude, Grok...) must be switched on before first use: at login, pi posts
``{"state": "enabled"}`` to ``<api>/models/<id>/policy`` for each catalog model whose policy is
``unconfigured`` (and whose picker is on, or the fallback above applies), and adds those that
were switched on to ``availableModelIds``. A refresh only reads the list.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from pi_host.config import oauth_http as http
from pi_host.config.oauth_http import OAuthError

INDIVIDUAL_BASE = "https://api.individual.githubcopilot.com"


@dataclass
class AccountModels:
    available: list[str] = field(default_factory=list)
    """What the account may use now (``availableModelIds``)."""
    policy_gated: list[str] = field(default_factory=list)
    """Models to switch on at login (before the catalog check)."""


def parse_models(body: Any, base_url: str) -> AccountModels | None:
    """The account's lists from a ``/models`` answer; None when it has no ``data`` list."""
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return None
    listed = []  # (id, picker on, policy state)
    for item in data:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            continue
        supports = ((item.get("capabilities") or {}).get("supports")) or {}
        if isinstance(supports, dict) and supports.get("tool_calls") is False:
            continue
        policy = item.get("policy")
        state = policy.get("state") if isinstance(policy, dict) else None
        listed.append((item["id"], item.get("model_picker_enabled") is True, state))
    picker = [mid for mid, on, state in listed if on and state != "disabled"]
    fallback = base_url == INDIVIDUAL_BASE and not picker
    available = [mid for mid, _, state in listed if state == "enabled"] if fallback else picker
    gated = [mid for mid, on, state in listed if state == "unconfigured" and (on or fallback)]
    return AccountModels(available, gated)


def enable_models(
    base_url: str,
    headers: dict[str, str],
    model_ids: list[str],
    request: Callable[..., tuple[int, Any, str]] = http.request,
) -> list[str]:
    """Switch each model on; returns those the API accepted. Best effort: a failed model is
    skipped, and rate limiting that outlasts its retries stops the batch (pi's rule)."""
    enabled = []
    for model_id in model_ids:
        outcome = _enable(base_url, headers, model_id, request)
        if outcome is None:  # still rate limited
            break
        if outcome:
            enabled.append(model_id)
    return enabled


def _enable(
    base_url: str, headers: dict[str, str], model_id: str, request: Callable[..., Any]
) -> bool | None:
    url = http.endpoint(f"{base_url}/models/{model_id}/policy")
    policy_headers = {
        **headers,
        "Content-Type": "application/json",
        "openai-intent": "chat-policy",
        "x-interaction-type": "chat-policy",
    }
    deadline = time.monotonic() + 5
    for attempt in range(3):  # the first try and two retries, within 5 s (pi's budget)
        try:
            status, _, _ = request(
                "POST", url, json_body={"state": "enabled"}, headers=policy_headers, timeout=5
            )
        except OAuthError:
            return False
        if status != 429:
            return 200 <= status < 300
        if attempt == 2 or time.monotonic() + 0.5 * (attempt + 1) > deadline:
            return None
        time.sleep(0.5 * (attempt + 1))
    return None


def with_enabled(
    models: AccountModels, catalog_ids: Collection[str] | None, enable: Callable[[list[str]], list[str]]
) -> list[str]:
    """``availableModelIds`` after switching on the catalog's policy-gated models (none when the
    catalog is not known: nothing is switched on that pi would not)."""
    gated = [mid for mid in models.policy_gated if catalog_ids is not None and mid in catalog_ids]
    enabled = enable(gated) if gated else []
    return list(dict.fromkeys([*models.available, *enabled]))
