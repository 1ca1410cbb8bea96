"""Tool-argument validation against JSON Schema, with pi's coercions (reference §4.5).

Coercions: numeric strings become numbers, ``"true"``/``"false"`` booleans, a single value a
one-item array, and ``null`` in an optional property is dropped. Arguments are deep-copied first
so coercion never alters the transcript. Problems are reported per dotted path (``root`` for the
top level).
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

Problem = tuple[str, str]

_NUMBER_RE = re.compile(r"^\s*-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")


def validate_arguments(schema: dict[str, Any], args: Any) -> tuple[Any, list[Problem]]:
    """Return the coerced copy of ``args`` and the list of ``(path, message)`` problems."""
    problems: list[Problem] = []
    value = _check(schema or {}, copy.deepcopy(args), "root", problems)
    return value, problems


def format_problems(tool_name: str, problems: list[Problem], received: Any) -> str:
    lines = [f'Validation failed for tool "{tool_name}":']
    lines += [f"  - {path}: {message}" for path, message in problems]
    lines += ["", "Received arguments:", json.dumps(received, indent=2, ensure_ascii=False, default=str)]
    return "\n".join(lines)


def _join(path: str, key: str | int) -> str:
    if path == "root":
        return str(key)
    return f"{path}.{key}"


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _matches_type(expected: str, value: Any) -> bool:
    actual = _type_name(value)
    if expected == actual:
        return True
    if expected == "number" and actual == "integer":
        return True
    if expected == "integer" and actual == "number":
        return float(value).is_integer()
    return False


def _coerce(expected: str, value: Any) -> Any:
    """A coerced value for ``expected``, or the original when no coercion applies."""
    if expected in ("number", "integer") and isinstance(value, str) and _NUMBER_RE.match(value):
        number = float(value)
        if expected == "integer" or number.is_integer() and not any(c in value for c in ".eE"):
            return int(number) if number.is_integer() else number
        return number
    if expected in ("number", "integer") and isinstance(value, bool):
        return int(value)
    if expected == "boolean" and isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if expected == "string" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if expected == "array" and not isinstance(value, list):
        return [value]
    if expected == "null" and value in ("", "null"):
        return None
    return value


def _check(schema: dict[str, Any], value: Any, path: str, problems: list[Problem]) -> Any:
    if not isinstance(schema, dict):
        return value
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return _check_union(schema[key], value, path, problems)
    if "allOf" in schema:
        for sub in schema["allOf"]:
            value = _check(sub, value, path, problems)
    expected = schema.get("type")
    if expected is not None:
        types = expected if isinstance(expected, list) else [expected]
        if not any(_matches_type(t, value) for t in types):
            for t in types:
                coerced = _coerce(t, value)
                if _matches_type(t, coerced):
                    value = coerced
                    break
            else:
                problems.append((path, f"must be {' or '.join(types)}, got {_type_name(value)}"))
                return value
    if "const" in schema and value != schema["const"]:
        problems.append((path, f"must be equal to {json.dumps(schema['const'])}"))
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(json.dumps(v) for v in schema["enum"])
        problems.append((path, f"must be one of {allowed}"))
    if isinstance(value, dict):
        value = _check_object(schema, value, path, problems)
    elif isinstance(value, list):
        value = _check_array(schema, value, path, problems)
    elif isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            problems.append((path, f"must have at least {schema['minLength']} characters"))
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            problems.append((path, f"must have at most {schema['maxLength']} characters"))
        if "pattern" in schema and not re.search(schema["pattern"], value):
            problems.append((path, f"must match pattern {schema['pattern']}"))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append((path, f"must be >= {schema['minimum']}"))
        if "maximum" in schema and value > schema["maximum"]:
            problems.append((path, f"must be <= {schema['maximum']}"))
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            problems.append((path, f"must be > {schema['exclusiveMinimum']}"))
        if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
            problems.append((path, f"must be < {schema['exclusiveMaximum']}"))
    return value


def _check_union(options: list[dict[str, Any]], value: Any, path: str, problems: list[Problem]) -> Any:
    best: tuple[Any, list[Problem]] | None = None
    for option in options:
        attempt: list[Problem] = []
        result = _check(option, copy.deepcopy(value), path, attempt)
        if not attempt:
            return result
        if best is None or len(attempt) < len(best[1]):
            best = (result, attempt)
    if best is None:
        return value
    problems.extend(best[1])
    return value


def _check_object(schema: dict[str, Any], value: dict[str, Any], path: str, problems: list[Problem]) -> Any:
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    for name in required:
        if name not in value:
            problems.append((_join(path, name), "is required"))
    for name in list(value):
        sub = properties.get(name)
        if sub is None:
            extra = schema.get("additionalProperties", True)
            if extra is False:
                problems.append((_join(path, name), "is not an allowed property"))
            elif isinstance(extra, dict):
                value[name] = _check(extra, value[name], _join(path, name), problems)
            continue
        if value[name] is None and name not in required and not _allows_null(sub):
            del value[name]
            continue
        value[name] = _check(sub, value[name], _join(path, name), problems)
    return value


def _allows_null(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_allows_null(s) for s in schema.get("anyOf", []) + schema.get("oneOf", []))


def _check_array(schema: dict[str, Any], value: list[Any], path: str, problems: list[Problem]) -> Any:
    items = schema.get("items")
    if isinstance(items, dict):
        value = [_check(items, item, _join(path, i), problems) for i, item in enumerate(value)]
    if "minItems" in schema and len(value) < schema["minItems"]:
        problems.append((path, f"must have at least {schema['minItems']} items"))
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        problems.append((path, f"must have at most {schema['maxItems']} items"))
    return value


_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
_MAX_SCHEMA_DEPTH = 64


def schema_problem(schema: Any, path: str = "parameters", depth: int = 0) -> str | None:
    """What makes ``schema`` unusable for :func:`validate_arguments` (a pattern that does not
    compile, an unknown type, a malformed keyword...), or None. Checked when a tool registers,
    so a bad schema costs the tool, not every run that calls it."""
    if not isinstance(schema, dict):
        return f"{path} must be an object, got {_type_name(schema)}"
    if depth > _MAX_SCHEMA_DEPTH:
        return f"{path} is nested deeper than {_MAX_SCHEMA_DEPTH} levels"
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        unknown = [k for k in kinds if k not in _TYPES]
        if unknown:
            return f"{path}.type: unknown type {unknown[0]!r}"
    pattern = schema.get("pattern")
    if pattern is not None:
        if not isinstance(pattern, str):
            return f"{path}.pattern must be a string"
        try:
            re.compile(pattern)
        except re.error as exc:
            return f"{path}.pattern {pattern!r} is not a valid regular expression: {exc}"
    for key in (
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
    ):
        if key in schema and (isinstance(schema[key], bool) or not isinstance(schema[key], (int, float))):
            return f"{path}.{key} must be a number"
    if "required" in schema and not (
        isinstance(schema["required"], list) and all(isinstance(name, str) for name in schema["required"])
    ):
        return f"{path}.required must be a list of property names"
    if "enum" in schema and not isinstance(schema["enum"], list):
        return f"{path}.enum must be a list"
    properties = schema.get("properties")
    if properties is not None:
        if not isinstance(properties, dict):
            return f"{path}.properties must be an object"
        for name, sub in properties.items():
            found = schema_problem(sub, f"{path}.properties.{name}", depth + 1)
            if found:
                return found
    subs: list[tuple[str, Any]] = []
    if isinstance(schema.get("items"), dict):
        subs.append((f"{path}.items", schema["items"]))
    if isinstance(schema.get("additionalProperties"), dict):
        subs.append((f"{path}.additionalProperties", schema["additionalProperties"]))
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            if not isinstance(schema[key], list):
                return f"{path}.{key} must be a list"
            subs.extend((f"{path}.{key}[{i}]", sub) for i, sub in enumerate(schema[key]))
    for where, sub in subs:
        found = schema_problem(sub, where, depth + 1)
        if found:
            return found
    return None
