"""Small builders for session-file tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.paths import SESSION_FIXTURES

FIXTURES = SESSION_FIXTURES


def header(
    session_id: str = "01a30f6e-7c21-7d4a-9b0e-5f2c81d4e6a7", cwd: str = "/home/dev/kite", **extra: Any
) -> dict:
    return {
        "type": "session",
        "version": 3,
        "id": session_id,
        "timestamp": "2026-12-02T09:14:03.512Z",
        "cwd": cwd,
        **extra,
    }


def entry(
    kind: str, entry_id: str, parent: str | None, ts: str = "2026-12-02T09:14:03.590Z", **fields: Any
) -> dict:
    return {"type": kind, "id": entry_id, "parentId": parent, "timestamp": ts, **fields}


def user(entry_id: str, parent: str | None, text: str, ts: str = "2026-12-02T09:14:04.000Z") -> dict:
    return entry(
        "message",
        entry_id,
        parent,
        ts,
        message={"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1},
    )


def assistant(
    entry_id: str, parent: str | None, text: str = "", calls: list[dict] | None = None, **extra: Any
) -> dict:
    content: list[dict] = [{"type": "text", "text": text}] if text else []
    for call in calls or ():
        content.append({"type": "toolCall", "arguments": {}, **call})
    message = {
        "role": "assistant",
        "content": content,
        "api": "faux",
        "provider": "faux",
        "model": "faux-1",
        "usage": {
            "input": 1,
            "output": 1,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 2,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "toolUse" if calls else "stop",
        "timestamp": 2,
        **extra,
    }
    return entry("message", entry_id, parent, "2026-12-02T09:14:05.000Z", message=message)


def tool_result(entry_id: str, parent: str, call_id: str, text: str = "ok") -> dict:
    message = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "bash",
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 3,
    }
    return entry("message", entry_id, parent, "2026-12-02T09:14:06.000Z", message=message)


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def roles(messages: list[Any]) -> list[str]:
    return [m.role for m in messages]


def texts(messages: list[Any]) -> list[str]:
    out = []
    for m in messages:
        content = getattr(m, "content", None)
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.append("".join(getattr(b, "text", "") for b in content))
        else:
            out.append(getattr(m, "summary", ""))
    return out
