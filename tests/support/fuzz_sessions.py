"""Hypothesis strategies for session files: valid v3 entries forming a tree, and garbage lines
(arbitrary JSON, arbitrary bytes, valid entries with one thing changed)."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tests.support.session_files import header

FUZZ = settings(
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
"""The session fuzz tests' settings: deterministic, no example database (each test adds its own
``max_examples``)."""

TEXT = st.text(max_size=12)
INT = st.integers(min_value=0, max_value=10**6)
INTERESTING_KEYS = [
    "type",
    "id",
    "parentId",
    "timestamp",
    "message",
    "role",
    "content",
    "text",
    "summary",
    "customType",
    "targetId",
    "replacement",
    "firstKeptEntryId",
    "systemMessage",
    "usage",
    "toolCallId",
    "arguments",
    "name",
    "label",
]
ENTRY_TYPES = [
    "message",
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
    "context_edit",
    "usage",
    "session",
    "future_kind",
]
ROLES = ["user", "assistant", "toolResult", "system", "bashExecution", "custom", "hookMessage", "robot"]


def _no_valid_ids(value: Any) -> Any:
    """Garbage must not borrow the ids of the valid entries (``v...``): those must all be kept."""
    if isinstance(value, dict):
        return {
            k: ("g" + v if k == "id" and isinstance(v, str) and v.startswith("v") else _no_valid_ids(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_no_valid_ids(v) for v in value]
    return value


LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)  # wider ones: doubles, as in JavaScript
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
    | st.sampled_from(ENTRY_TYPES + ROLES + ["text", "toolCall", "image", "thinking"])
)
KEYS = st.sampled_from(INTERESTING_KEYS) | st.text(max_size=4)
JSON = st.recursive(
    LEAVES,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=6),
    max_leaves=12,
).map(_no_valid_ids)


def _usage(draw) -> dict[str, Any]:
    parts = {k: draw(INT) for k in ("input", "output", "cacheRead", "cacheWrite")}
    cost = {k: draw(st.integers(0, 5)) for k in ("input", "output", "cacheRead", "cacheWrite", "total")}
    return {**parts, "totalTokens": draw(INT), "cost": cost}


def _text_blocks(draw, images: bool = False) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 3))):
        if images and draw(st.booleans()):
            blocks.append({"type": "image", "data": "aGk=", "mimeType": "image/png"})
        else:
            blocks.append({"type": "text", "text": draw(TEXT)})
    return blocks


def _message(draw, ids: list[str]) -> dict[str, Any]:
    role = draw(st.sampled_from(["user", "assistant", "toolResult", "system", "bashExecution", "custom"]))
    stamp = draw(INT)
    if role == "user":
        content: Any = draw(TEXT) if draw(st.booleans()) else _text_blocks(draw, images=True)
        return {"role": "user", "content": content, "timestamp": stamp}
    if role == "assistant":
        content = []
        for _ in range(draw(st.integers(0, 3))):
            kind = draw(st.sampled_from(["text", "thinking", "toolCall"]))
            if kind == "text":
                content.append({"type": "text", "text": draw(TEXT)})
            elif kind == "thinking":
                content.append({"type": "thinking", "thinking": draw(TEXT)})
            else:
                call = {"type": "toolCall", "id": f"call{draw(INT)}", "name": "read"}
                content.append({**call, "arguments": {"path": draw(TEXT)}})
        reasons = ["stop", "length", "toolUse", "error", "aborted"]
        return {
            "role": "assistant",
            "content": content,
            "api": "faux",
            "provider": "faux",
            "model": "faux-1",
            "usage": _usage(draw),
            "stopReason": draw(st.sampled_from(reasons)),
            "timestamp": stamp,
        }
    if role == "toolResult":
        result = {"role": "toolResult", "toolCallId": f"call{draw(INT)}", "toolName": "read"}
        return {
            **result,
            "content": _text_blocks(draw, images=True),
            "isError": draw(st.booleans()),
            "timestamp": stamp,
        }
    if role == "system":
        return {
            "role": "system",
            "content": draw(TEXT),
            "sections": {"preamble": draw(TEXT)},
            "timestamp": stamp,
        }
    if role == "bashExecution":
        return {
            "role": "bashExecution",
            "command": draw(TEXT),
            "output": draw(TEXT),
            "exitCode": 0,
            "timestamp": stamp,
        }
    return {
        "role": "custom",
        "customType": "note",
        "content": draw(TEXT),
        "display": True,
        "timestamp": stamp,
    }


def _fields(draw, kind: str, own_id: str, ids: list[str]) -> dict[str, Any]:
    target = st.sampled_from(ids) if ids else st.just(own_id)
    if kind == "message":
        return {"message": _message(draw, ids)}
    if kind == "model_change":
        return {"provider": "faux", "modelId": draw(st.sampled_from(["faux-1", "other"]))}
    if kind == "thinking_level_change":
        return {"thinkingLevel": draw(st.sampled_from(["off", "low", "high", "weird"]))}
    if kind == "compaction":
        first = draw(target | st.just(own_id))
        return {"summary": draw(TEXT), "firstKeptEntryId": first, "tokensBefore": draw(INT)}
    if kind == "branch_summary":
        return {"fromId": draw(target | st.just("root")), "summary": draw(TEXT)}
    if kind == "custom":
        return {"customType": draw(TEXT), "data": draw(JSON)}
    if kind == "custom_message":
        content = draw(TEXT) if draw(st.booleans()) else _text_blocks(draw, images=True)
        return {"customType": draw(TEXT), "content": content, "display": draw(st.booleans())}
    if kind == "label":
        return {"targetId": draw(target), **({"label": draw(TEXT)} if draw(st.booleans()) else {})}
    if kind == "session_info":
        return {"name": draw(TEXT)}
    if kind == "context_edit":
        replacement = None if draw(st.booleans()) else {"content": draw(TEXT)}
        return {"targetId": draw(target), "replacement": replacement}
    return {"data": draw(JSON)}  # an entry type of a newer version: kept as it is


VALID_KINDS = [k for k in ENTRY_TYPES if k != "session"]


@st.composite
def valid_entries(draw, max_size: int = 10) -> list[dict[str, Any]]:
    """A v3 entry list whose ids are ``v0000000``, ``v0000001``...; parents are earlier entries."""
    entries: list[dict[str, Any]] = []
    ids: list[str] = []
    for index in range(draw(st.integers(1, max_size))):
        own = f"v{index:07d}"
        parent = draw(st.sampled_from(ids[-1:] * 3 + ids + [None])) if ids else None
        kind = draw(st.sampled_from(VALID_KINDS))
        stamp = f"2026-12-02T09:{index // 60:02d}:{index % 60:02d}.000Z"
        entries.append(
            {"type": kind, "id": own, "parentId": parent, "timestamp": stamp, **_fields(draw, kind, own, ids)}
        )
        ids.append(own)
    return entries


def _mutate(draw, entry: dict[str, Any], new_id: str) -> dict[str, Any]:
    mutated = copy.deepcopy(entry)
    mutated["id"] = new_id
    holders = [mutated]
    message = mutated.get("message")
    if isinstance(message, dict):
        holders.append(message)
        holders.extend(b for b in message.get("content") or () if isinstance(b, dict))
    holder = draw(st.sampled_from(holders))
    key = draw(st.sampled_from(sorted(holder) + INTERESTING_KEYS))
    if draw(st.integers(0, 4)) == 0:
        holder.pop(key, None)
    else:
        holder[key] = draw(JSON)
    if mutated.get("id") is not None and isinstance(mutated.get("id"), str) and mutated["id"].startswith("v"):
        mutated["id"] = new_id  # the mutation may not take a valid entry's id either
    return mutated


@st.composite
def garbage_line(draw, valid: list[dict[str, Any]], number: int) -> bytes:
    kind = draw(st.sampled_from(["json", "bytes", "mutation", "mutation", "truncated"]))
    if kind == "json":
        return json.dumps(draw(JSON)).encode()
    if kind == "bytes":
        return draw(st.binary(max_size=40))
    source = draw(st.sampled_from(valid))
    line = json.dumps(_mutate(draw, source, f"m{number:07d}")).encode()
    if kind == "truncated":
        return line[: draw(st.integers(0, max(0, len(line) - 1)))]
    return line


@st.composite
def mixed_files(draw, cwd: str) -> tuple[bytes, list[dict[str, Any]]]:
    """``(file bytes, the valid entries in it)``: a header, the valid entries in order, and
    garbage lines between them."""
    valid = draw(valid_entries())
    lines = [json.dumps(e).encode() for e in valid]
    for number in range(draw(st.integers(0, 6))):
        position = draw(st.integers(0, len(lines)))
        lines.insert(position, draw(garbage_line(valid, number)))
    head = json.dumps(header(cwd=cwd)).encode()
    return b"\n".join([head, *lines]) + b"\n", valid
