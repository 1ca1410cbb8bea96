"""Usage totals and cost (reference §1.4).

Prices are USD per million tokens. ``cost.tiers`` (from models.json) switches the whole request to
the highest tier whose ``inputTokensAbove`` the request's input exceeds.
"""

from __future__ import annotations

import math
from typing import Any

from pi_host.protocol import Cost, Usage


def _price(source: Any, name: str, alias: str) -> float:
    if isinstance(source, dict):
        value = source.get(alias, source.get(name, 0))
    else:
        value = getattr(source, name, 0)
    return float(value or 0)


def pick_prices(model_cost: Any, usage: Usage) -> Any:
    """The price table that applies to this request (a tier or the base prices)."""
    tiers = (
        model_cost.get("tiers") if isinstance(model_cost, dict) else getattr(model_cost, "tiers", None)
    ) or []
    prompt = usage.input + usage.cache_read + usage.cache_write
    chosen = None
    for tier in tiers:
        above = tier.get("inputTokensAbove", tier.get("input_tokens_above"))
        if above is not None and prompt > above and (chosen is None or above > chosen[0]):
            chosen = (above, tier)
    if chosen is None:
        return model_cost
    # A tier may list only some prices; the others keep the base value.
    merged = {
        name: _price(model_cost, name, alias)
        for name, alias in (
            ("input", "input"),
            ("output", "output"),
            ("cache_read", "cacheRead"),
            ("cache_write", "cacheWrite"),
        )
    }
    for name, alias in (
        ("input", "input"),
        ("output", "output"),
        ("cache_read", "cacheRead"),
        ("cache_write", "cacheWrite"),
    ):
        if alias in chosen[1] or name in chosen[1]:
            merged[name] = _price(chosen[1], name, alias)
    return merged


def calculate_cost(model: Any, usage: Usage) -> Cost:
    """Fill ``usage.cost`` from the model's prices and return it (provider-reported cost kept)."""
    if usage.cost.total_from_provider:
        return usage.cost
    prices = pick_prices(getattr(model, "cost", None) or {}, usage)
    cost = usage.cost
    cost.input = _price(prices, "input", "input") / 1e6 * usage.input
    cost.output = _price(prices, "output", "output") / 1e6 * usage.output
    cost.cache_read = _price(prices, "cache_read", "cacheRead") / 1e6 * usage.cache_read
    # A 1-hour cache write is billed at twice the input price, the rest at the cache-write price.
    long_write = usage.cache_write_1h or 0
    cost.cache_write = (
        _price(prices, "cache_write", "cacheWrite") * (usage.cache_write - long_write)
        + _price(prices, "input", "input") * 2 * long_write
    ) / 1e6
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write
    return cost


def finalize_usage(model: Any, usage: Usage) -> Usage:
    """Recompute ``totalTokens`` (input + output + cacheRead + cacheWrite) and the cost."""
    usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
    calculate_cost(model, usage)
    return usage


def is_openrouter(model: Any) -> bool:
    """OpenRouter by provider name or base URL (its usage may carry the billed cost)."""
    return getattr(model, "provider", None) == "openrouter" or "openrouter.ai" in (
        getattr(model, "base_url", None) or ""
    )


def _valid_cost(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


def apply_reported_cost(usage: Usage, raw: dict[str, Any]) -> None:
    """Replace ``cost.total`` with the billed cost an OpenRouter usage object reports, marking
    ``totalFromProvider``. Needs ``cost`` and ``is_byok``; a bring-your-own-key request adds the
    upstream cost (``cost_details.upstream_inference_cost``, or its prompt + completions parts
    when that is null). Incomplete accounting leaves the catalog total alone."""
    reported = raw.get("cost")
    if not _valid_cost(reported):
        return
    byok = raw.get("is_byok")
    if byok is False:
        total = reported
    elif byok is True:
        details = raw.get("cost_details")
        if not isinstance(details, dict):
            return
        upstream = details.get("upstream_inference_cost")
        if upstream is None:
            parts = (
                details.get("upstream_inference_prompt_cost"),
                details.get("upstream_inference_completions_cost"),
            )
            if not all(_valid_cost(part) for part in parts):
                return
            upstream = parts[0] + parts[1]
        if not _valid_cost(upstream):
            return
        total = reported + upstream
    else:
        return
    usage.cost.total = total
    usage.cost.total_from_provider = True
