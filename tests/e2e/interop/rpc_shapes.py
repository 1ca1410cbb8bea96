"""What the RPC conformance test compares of a record, so that pi 1.6.0's and pi-host's runs can
be set side by side: event type sequences, JSON shapes (keys and types, with the values of a few
keys kept), stable values, and the differences between two shapes."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.e2e.interop.test_rpc_conformance import Step, Transcript

VALUE_KEYS = frozenset(
    {
        "command",
        "success",
        "disposition",
        "cancelled",
        "isStreaming",
        "isCompacting",
        "steeringMode",
        "followUpMode",
        "thinkingLevel",
        "autoCompactionEnabled",
        "messageCount",
        "pendingMessageCount",
        "userMessages",
        "assistantMessages",
        "toolCalls",
        "toolResults",
        "totalMessages",
        "exitCode",
        "truncated",
        "levels",
        "source",
        "scope",
        "origin",
        "role",
        "stopReason",
        "isScoped",
        "reasoning",
    }
)
"""Keys whose values are compared (wherever they occur in ``data``), not only their types."""


def _event_type(record: dict[str, Any]) -> str:
    kind = str(record.get("type"))
    if kind == "message_update":
        return f"message_update/{(record.get('assistantMessageEvent') or {}).get('type')}"
    if kind == "extension_ui_request":
        return f"extension_ui_request/{record.get('method')}"
    return kind


def event_sequence(step: Step) -> list[str]:
    out: list[str] = []
    for record in step.events:
        kind = _event_type(record)
        if step.racy and kind == "message_update/text_delta":
            continue
        if not out or out[-1] != kind:
            out.append(kind)
    return out


DISCRIMINATORS = ("type", "role", "stopReason")
"""Keys whose string values are part of a shape (``"=message"``): they tell variants apart."""

APART = ("usage", "responseModel")
"""Fields of every assistant message, compared once over the whole run (:func:`test_field_apart`)
and left out of the other shapes (``usage`` shows as ``"<usage>"``)."""


def shape(value: Any, apart: bool = True) -> Any:
    """The JSON type of ``value``: objects key by key (:data:`DISCRIMINATORS` keep their values),
    arrays as ``["array", *sorted distinct element shapes]``; with ``apart``, :data:`APART`
    fields are masked."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        elements = {json.dumps(shape(v, apart), sort_keys=True) for v in value}
        return ["array", *(json.loads(e) for e in sorted(elements))]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in sorted(value.items()):
            if apart and key == "responseModel":
                continue
            if apart and key == "usage" and isinstance(item, dict):
                out[key] = "<usage>"
            elif key in DISCRIMINATORS and isinstance(item, str):
                out[key] = f"={item}"
            else:
                out[key] = shape(item, apart)
        return out
    return type(value).__name__


def find_fields(value: Any, key: str) -> list[Any]:
    """Every value of ``key`` anywhere in ``value``."""
    found: list[Any] = []
    if isinstance(value, dict):
        for k, item in value.items():
            if k == key:
                found.append(item)
            found.extend(find_fields(item, key))
    elif isinstance(value, list):
        for item in value:
            found.extend(find_fields(item, key))
    return found


def flatten_tree(data: Any) -> Any:
    """``get_tree`` data with the nodes listed depth-first (``children`` as the children's entry
    ids), so one extra entry does not shift every node below it."""
    if not isinstance(data, dict) or not isinstance(data.get("tree"), list):
        return data
    if any(isinstance(c, str) for node in data["tree"] for c in node.get("children") or ()):
        return data  # flat already
    nodes: list[dict[str, Any]] = []

    def walk(node: dict[str, Any]) -> None:
        children = node.get("children") or []
        nodes.append({**node, "children": [c.get("entry", {}).get("id") for c in children]})
        for child in children:
            walk(child)

    for root in data["tree"]:
        walk(root)
    return {**data, "tree": nodes}


def _kind(item: Any) -> str:
    if not isinstance(item, dict):
        return type(item).__name__
    kind = str(item.get("type", item.get("role", "?")))
    message = item.get("message")
    if isinstance(message, dict):
        kind += f"/{message.get('role')}"
    return kind


def values(data: Any) -> dict[str, Any]:
    """What is compared by value in ``data``: every :data:`VALUE_KEYS` key wherever it occurs
    (paths with ``[]`` for array elements), and the kinds of entries, tree nodes and messages in
    order."""
    out: dict[str, list[Any]] = {}

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key in ("usage", "cost"):  # token counts and prices
                    continue
                sub = f"{path}.{key}" if path else key
                if key in VALUE_KEYS and not isinstance(item, dict | list):
                    out.setdefault(sub, []).append(item)
                elif key in VALUE_KEYS and isinstance(item, list) and all(isinstance(x, str) for x in item):
                    out.setdefault(sub, []).append(item)
                walk(item, sub)
        elif isinstance(value, list):
            for item in value:
                walk(item, f"{path}[]")

    walk(data, "")
    if isinstance(data, dict):
        for key in ("entries", "messages"):
            if isinstance(data.get(key), list):
                out[f"{key}:kinds"] = [_kind(item) for item in data[key]]
        if isinstance(data.get("tree"), list):
            flat = flatten_tree(data)["tree"]
            out["tree:kinds"] = [f"{_kind(n.get('entry'))}:{len(n['children'])}" for n in flat]
    return out


def _variant_key(variant: Any) -> str:
    if not isinstance(variant, dict):
        return json.dumps(variant)[:40]
    parts = [f"{k}{variant[k]}" for k in DISCRIMINATORS if isinstance(variant.get(k), str)]
    message = variant.get("message")
    if isinstance(message, dict):
        parts += [
            f"message.{k}{message[k]}" for k in ("role", "stopReason") if isinstance(message.get(k), str)
        ]
    return " ".join(parts) or "object"


def shape_diff(expected: Any, got: Any, path: str = "data") -> list[str]:
    """Readable differences between two shapes (pi's first); array variants are matched by their
    ``type``/``role`` and then by closeness."""
    if isinstance(expected, dict) and isinstance(got, dict):
        out: list[str] = []
        for key in sorted(set(expected) | set(got)):
            sub = f"{path}.{key}"
            if key not in got:
                out.append(f"{sub}: missing (pi: {json.dumps(expected[key])[:300]})")
            elif key not in expected:
                out.append(f"{sub}: extra (pi-host: {json.dumps(got[key])[:300]})")
            else:
                out.extend(shape_diff(expected[key], got[key], sub))
        return out
    if isinstance(expected, list) and isinstance(got, list) and expected[:1] == got[:1] == ["array"]:
        return _array_diff(expected[1:], got[1:], path)
    if expected != got:
        return [f"{path}: pi {json.dumps(expected)[:300]} / pi-host {json.dumps(got)[:300]}"]
    return []


def _array_diff(expected: list[Any], got: list[Any], path: str) -> list[str]:
    groups_e: dict[str, list[Any]] = {}
    groups_g: dict[str, list[Any]] = {}
    for variant in expected:
        groups_e.setdefault(_variant_key(variant), []).append(variant)
    for variant in got:
        groups_g.setdefault(_variant_key(variant), []).append(variant)
    out: list[str] = []
    for key in sorted(set(groups_e) | set(groups_g)):
        sub = f"{path}[{key}]" if key != "object" or len(groups_e) + len(groups_g) > 2 else f"{path}[]"
        ve, vg = groups_e.get(key, []), groups_g.get(key, [])
        if not vg:
            out.append(f"{sub}: only pi has such elements: {json.dumps(ve)[:300]}")
        elif not ve:
            out.append(f"{sub}: only pi-host has such elements: {json.dumps(vg)[:300]}")
        elif len(ve) == len(vg) == 1:
            out.extend(shape_diff(ve[0], vg[0], sub))
        else:
            for one, others in ((ve, vg), (vg, ve)):
                for variant in one:
                    if variant in others:
                        continue
                    pairs = [
                        (shape_diff(variant, o, sub) if one is ve else shape_diff(o, variant, sub))
                        for o in others
                    ]
                    out.extend(min(pairs, key=len))
    return list(dict.fromkeys(out))


def _data(step: Step) -> Any:
    return flatten_tree((step.response or {}).get("data"))


def response_summary(step: Step) -> dict[str, Any]:
    response = step.response or {}
    summary: dict[str, Any] = {
        "command": response.get("command"),
        "success": response.get("success"),
        "has_id": "id" in response,
        "has_data": "data" in response,
        "has_error": "error" in response,
    }
    return summary


def event_shapes(transcript: Transcript) -> dict[str, list[Any]]:
    """Per event type, the sorted set of its shapes over the whole run."""
    found: dict[str, set[str]] = {}
    for record in transcript.records:
        if record.get("type") == "response":
            continue
        found.setdefault(_event_type(record), set()).add(json.dumps(shape(record), sort_keys=True))
    return {kind: [json.loads(s) for s in sorted(shapes)] for kind, shapes in found.items()}


EVENT_VALUE_KEYS = ("aborted", "willRetry", "reason", "errorMessage", "isError", "toolName", "success")
MESSAGE_VALUE_KEYS = ("role", "stopReason", "errorMessage", "isError", "excludeFromContext")


def event_values(step: Step) -> list[str]:
    """Per event (runs collapsed), its type and its stable values."""
    out: list[str] = []
    for record in step.events:
        kind = _event_type(record)
        if step.racy and kind == "message_update/text_delta":
            continue
        picked = {k: record[k] for k in EVENT_VALUE_KEYS if k in record}
        message = record.get("message")
        if isinstance(message, dict):
            picked.update({f"message.{k}": message[k] for k in MESSAGE_VALUE_KEYS if k in message})
        item = f"{kind} {json.dumps(picked, sort_keys=True)}"
        if not out or out[-1] != item:
            out.append(item)
    return out


# --- the checks -----------------------------------------------------------------------------------------
