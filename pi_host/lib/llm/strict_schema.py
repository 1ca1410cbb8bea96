"""Strict (constrained-sampling) tool schemas, as pi 1.6.0 sends them.

A tool may ask for JSON-schema constrained sampling with ``constrained_sampling = {"type":
"json_schema", "strict": "prefer" | "require"}`` (pi's built-in read, bash, edit and write tools
ask with "prefer"). Where the API supports strict tools and the schema fits the strict subset,
the request carries a rewritten schema: every object lists all of its properties as required,
optional ones accept ``null`` instead, and no object allows extra properties. A schema outside the
subset (``$ref``, ``oneOf``, untyped nodes, open objects...) is sent as it is under "prefer" and
fails the request under "require".

OpenAI's Responses API marks such tools ``strict: true``; Gemini 3+ takes the rewritten schema and
the ``VALIDATED`` function-calling mode.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

# Keywords the strict subset has no room for (any of them makes the schema non-strict).
UNSUPPORTED_KEYS = (
    "$ref", "$defs", "definitions", "allOf", "oneOf", "patternProperties", "dependentSchemas",
    "dependencies", "unevaluatedProperties", "propertyNames", "contains", "prefixItems", "not",
    "if", "then", "else",
)  # fmt: skip


class NotStrict(ValueError):
    """The schema cannot be expressed in the strict subset (the message says why)."""


def _types(schema: dict[str, Any]) -> list[Any]:
    kind = schema.get("type")
    return [kind] if isinstance(kind, str) else list(kind) if isinstance(kind, list) else []


def _structured(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    kinds = _types(schema)
    return "object" in kinds or "array" in kinds or "properties" in schema or "items" in schema


def _allows_null(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    if "null" in _types(schema):
        return True
    if "const" in schema and schema["const"] is None:
        return True
    if isinstance(schema.get("enum"), list) and None in schema["enum"]:
        return True
    return isinstance(schema.get("anyOf"), list) and any(_allows_null(v) for v in schema["anyOf"])


Refuses = Callable[[str, Any], bool]
"""An API's own rule on top of the subset: ``refuses(keyword, value)`` (Anthropic's bounds)."""


def _strict_node(schema: Any, refuses: Refuses | None = None) -> None:
    """Rewrite ``schema`` in place into the strict subset, or raise :class:`NotStrict`."""
    if not isinstance(schema, dict):
        raise NotStrict("boolean schemas are unsupported")
    for key in UNSUPPORTED_KEYS:
        if key in schema:
            raise NotStrict(f"{key} schemas are unsupported")
    if refuses is not None:
        for key, value in schema.items():
            if key != "properties" and refuses(key, value):
                raise NotStrict(f"{key} is unsupported")
    # A node must say what it is: a type, a union or an enum (a bare const is not enough).
    if "type" not in schema and "anyOf" not in schema and "enum" not in schema:
        raise NotStrict("schemas without a type are unsupported")
    if "anyOf" in schema:
        variants = schema["anyOf"]
        if not isinstance(variants, list) or not variants:
            raise NotStrict("anyOf must contain at least one schema")
        for variant in variants:
            if _structured(variant):
                raise NotStrict("object and array unions are unsupported")
            _strict_node(variant, refuses)
    if "items" in schema:
        if isinstance(schema["items"], list):
            raise NotStrict("tuple schemas are unsupported")
        _strict_node(schema["items"], refuses)
    is_object = schema.get("type") == "object"
    if "properties" in schema and not is_object:
        raise NotStrict("properties require type object")
    if not is_object:
        return
    if schema.get("additionalProperties", False) is not False:
        raise NotStrict("schema-valued or true additionalProperties is unsupported")
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        raise NotStrict("object properties must be a schema map")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        raise NotStrict("object required must be a string array")
    if any(name not in properties for name in required):
        raise NotStrict("required contains an unknown property")
    for name, value in list(properties.items()):
        _strict_node(value, refuses)
        if name not in required and not _allows_null(value):
            properties[name] = {"anyOf": [value, {"type": "null"}]}
    schema["required"] = list(properties)
    schema["additionalProperties"] = False


def make_strict(schema: Any, refuses: Refuses | None = None) -> dict[str, Any]:
    """A strict copy of a tool's parameter schema; raises :class:`NotStrict`."""
    copied = copy.deepcopy(schema)
    if not isinstance(copied, dict):
        raise NotStrict("root schema must have type object")
    _strict_node(copied, refuses)
    if copied.get("type") != "object":
        raise NotStrict("root schema must have type object")
    return copied


def strict_sampling(tool: Any, supported: bool, refuses: Refuses | None = None) -> bool | None:
    """Whether ``tool`` goes out strict: True, or None when it did not ask or cannot be (then
    the caller's default applies). A tool that requires strict sampling where it is impossible
    raises ``ValueError``, which fails the request as pi does."""
    config = getattr(tool, "constrained_sampling", None)
    if not isinstance(config, dict) or config.get("type") != "json_schema":
        return None
    required = config.get("strict") == "require"
    if not supported:
        if required:
            raise ValueError(
                f'Tool "{tool.name}" requires JSON-schema constrained sampling, but strict tools are unsupported.'
            )
        return None
    try:
        make_strict(tool.parameters, refuses)
    except NotStrict as problem:
        if required:
            raise ValueError(
                f'Tool "{tool.name}" requires JSON-schema constrained sampling, but {problem}.'
            ) from None
        return None
    return True


def tool_parameters(tool: Any, strict: bool | None, refuses: Refuses | None = None) -> dict[str, Any]:
    """The schema a request declares for ``tool``: the strict rewrite when it goes out strict."""
    return make_strict(tool.parameters, refuses) if strict is True else tool.parameters


def prefers_strict(tool: Any) -> bool:
    """The tool asks for strict sampling where possible (``"prefer"``), not at any price."""
    config = getattr(tool, "constrained_sampling", None)
    return (
        isinstance(config, dict) and config.get("type") == "json_schema" and config.get("strict") != "require"
    )
