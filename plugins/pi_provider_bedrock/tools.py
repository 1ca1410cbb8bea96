"""The ``toolConfig`` of a ConverseStream request, strict tools included, as pi 1.6.0 sends it.

A tool asking for JSON-schema constrained sampling goes out with ``strict: true`` and the strict
rewrite of its schema (``pi_host.lib.llm.strict_schema``) when the model's compat has
``supportsStrictMode`` (pi's catalog sets it on the Claude models) and the schema fits the strict
subset; Bedrock adds no limits of its own on top of the subset, unlike Anthropic's API.

Claude on Bedrock has the same limits on strict tools as on Anthropic's API (20 strict tools, 16
optional or union-typed parameters across them) and refuses a request over them with a
``ValidationException`` before the stream starts. The stream then sends the request once more with
the tools that only *prefer* strict sampling sent plain, and the session stays plain. That record
is the one the Anthropic adapter keeps (:mod:`pi_provider_anthropic.tools`): pi shares it between
the two providers, since both run Claude's limits, so a session refused on one does not try again
on the other.
"""

from __future__ import annotations

from typing import Any

import orjson

from pi_host.lib.llm.errors import ProviderHTTPError
from pi_host.lib.llm.strict_schema import prefers_strict, strict_sampling, tool_parameters
from pi_host.lib.llm.strict_tool_limits import is_limit_error

__all__ = ["convert_tools", "limit_refusal", "supports_strict"]


def supports_strict(model: Any) -> bool:
    return bool((model.compat or {}).get("supportsStrictMode", False))


def convert_tools(
    decls: list[Any], supports: bool, plain_preferred: bool
) -> tuple[dict[str, Any] | None, bool]:
    """The ``toolConfig`` (None without tools), and whether a tool went out strict only because
    it prefers it: those are the ones the limit fallback sends plain (``plain_preferred``)."""
    if not decls:
        return None, False
    specs = []
    preferred_strict = False
    for decl in decls:
        prefers = prefers_strict(decl)
        # A tool that *requires* strict sampling stays strict in the fallback too (or fails).
        strict = None if plain_preferred and prefers else strict_sampling(decl, supports)
        preferred_strict |= strict is True and prefers
        spec: dict[str, Any] = {
            "name": decl.name,
            "description": decl.description,
            "inputSchema": {"json": tool_parameters(decl, strict)},
        }
        if strict is True:
            spec["strict"] = True
        specs.append({"toolSpec": spec})
    return {"tools": specs}, preferred_strict


def _error_type(exc: ProviderHTTPError, body: dict[str, Any]) -> str:
    # AWS JSON protocols name the error in x-amzn-ErrorType ("ValidationException:<namespace>")
    # or, from some front ends, in the body's __type / code ("<namespace>#ValidationException").
    for name, value in exc.headers.items():
        if name.lower() == "x-amzn-errortype" and value:
            return value.split(":", 1)[0]
    raw = str(body.get("__type") or body.get("code") or "")
    return raw.rsplit("#", 1)[-1]


def limit_refusal(exc: ProviderHTTPError) -> str | None:
    """Bedrock's message when ``exc`` refuses the request's strict tools as over Claude's limits."""
    if exc.status != 400:
        return None
    try:
        body = orjson.loads(exc.body or "{}")
    except orjson.JSONDecodeError:
        return None
    if not isinstance(body, dict) or _error_type(exc, body) != "ValidationException":
        return None
    message = str(body.get("message") or body.get("Message") or "")
    return message if is_limit_error(message) else None
