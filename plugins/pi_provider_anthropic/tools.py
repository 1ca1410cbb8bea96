"""Tool definitions of a Messages request, strict ones included (as pi 1.6.0 sends them).

A tool that asks for JSON-schema constrained sampling goes out with ``strict: true`` and the
strict rewrite of its schema (``pi_host.lib.llm.strict_schema``) when the model's compat has
``supportsStrictTools`` and the schema fits both the strict subset and Anthropic's own limits:
no numeric bounds, item or property counts (``minItems`` 0 or 1 only), and ``format`` only from
Anthropic's list. ``input_schema`` always has the object shape Anthropic accepts: ``type``,
``properties``, ``required`` (empty when the tool has none), ``additionalProperties`` and
``$defs``/``definitions`` when given; other root keywords (``anyOf``, ``title``...) stay out.

Claude refuses a request whose strict tools exceed its limits (20 strict tools, 16 optional or
union-typed parameters across them) with a 400. The adapter then sends the request again with the
tools that only *prefer* strict sampling as plain tools, and remembers the session
(:mod:`pi_host.lib.llm.strict_tool_limits`, shared with Bedrock) so its later requests do not
try again: the tool set rarely changes, and switching back would rewrite the tool definitions
and miss the prompt cache.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pi_host.lib.llm.strict_schema import prefers_strict, strict_sampling, tool_parameters

UNSUPPORTED = frozenset(
    {
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "maxItems",
        "uniqueItems", "minContains", "maxContains", "minProperties", "maxProperties",
    }
)  # fmt: skip
STRING_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)


def refuses(key: str, value: Any) -> bool:
    """Anthropic's limits on strict schemas, beyond the common subset."""
    if key in UNSUPPORTED:
        return True
    if key == "minItems":
        return value not in (0, 1) or isinstance(value, bool)
    if key == "format":
        return not isinstance(value, str) or value not in STRING_FORMATS
    return False


def _object_shape(schema: dict[str, Any]) -> dict[str, Any]:
    shape: dict[str, Any] = {
        "type": "object",
        "properties": schema.get("properties") or {},
        "required": schema.get("required") or [],
    }
    for key in ("additionalProperties", "$defs", "definitions"):
        if key in schema:
            shape[key] = schema[key]
    return shape


def convert_tools(
    decls: list[Any],
    rename: Callable[[str], str],
    eager: bool,
    supports_strict: bool,
    plain_preferred: bool,
) -> tuple[list[dict[str, Any]], bool]:
    """The ``tools`` list (``rename`` gives each tool's wire name), and whether any tool went out
    strict only because it prefers it (the ones the limit fallback sends plain,
    ``plain_preferred``)."""
    tools = []
    preferred_strict = False
    for decl in decls:
        if plain_preferred and prefers_strict(decl):
            strict = None
        else:
            strict = strict_sampling(decl, supports_strict, refuses)
        preferred_strict |= strict is True and prefers_strict(decl)
        schema = decl.parameters or {"type": "object", "properties": {}}
        tool: dict[str, Any] = {"name": rename(decl.name), "description": decl.description}
        if eager:
            tool["eager_input_streaming"] = True
        if strict is True:
            tool["strict"] = True
            strict_schema = tool_parameters(decl, True, refuses)
            tool["input_schema"] = {**strict_schema, **_object_shape(strict_schema)}
        else:
            tool["input_schema"] = _object_shape(schema)
        tools.append(tool)
    return tools, preferred_strict
