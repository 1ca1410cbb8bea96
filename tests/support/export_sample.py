"""A hand-written session in pi's v3 format that exercises every part of the export page.

Tree (timestamps increase down the file)::

    m0 model_change
    └ t0 thinking_level_change
      └ u1 user "Write a **script**" (with an image)
        └ a1 assistant: thinking, text with a python fence, bash + read calls
          └ r1 toolResult (bash)
            └ r2 toolResult (read)
              └ a2 assistant "Done." ── branch A (older)
              └ u3 user "<script>…" (XSS attempt) ── branch B (newer, the leaf's branch)
                └ a3 assistant error
                  └ b1 bashExecution
                    └ c1 compaction
                      └ n1 session_info, l1 label on u1, x1 custom_message
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SESSION_ID = "01a30f6e-7c21-7d4a-9b0e-5f2c81d4e6a7"
# A 1x1 transparent PNG.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
XSS = "<script>alert('pwned')</script><img src=x onerror=alert(1)> & </script>"
MARKDOWN = "Here is the **script**:\n\n```python\ndef greet(name):\n    return f'hi {name}'\n```\n\nSee [docs](javascript:alert(1))."


def header(**extra: Any) -> dict[str, Any]:
    return {
        "type": "session",
        "version": 3,
        "id": SESSION_ID,
        "timestamp": "2026-12-02T09:14:03.512Z",
        "cwd": "/home/dev/kite",
        **extra,
    }


def _ts(second: int) -> str:
    return f"2026-12-02T09:14:{second:02d}.000Z"


def _entry(kind: str, entry_id: str, parent: str | None, second: int, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "id": entry_id, "parentId": parent, "timestamp": _ts(second), **fields}


def _message(entry_id: str, parent: str | None, second: int, **message: Any) -> dict[str, Any]:
    return _entry(
        "message", entry_id, parent, second, message={"timestamp": 1796202843000 + second, **message}
    )


def _assistant(content: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": "local-vllm",
        "model": "qwen3-coder",
        "usage": {
            "input": 900,
            "output": 40,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 940,
            "cost": {"total": 0.0012},
        },
        "stopReason": extra.pop("stopReason", "stop"),
        **extra,
    }


def entries() -> list[dict[str, Any]]:
    return [
        _entry("model_change", "m0", None, 3, provider="local-vllm", modelId="qwen3-coder"),
        _entry("thinking_level_change", "t0", "m0", 3, thinkingLevel="medium"),
        _message(
            "u1",
            "t0",
            4,
            role="user",
            content=[
                {"type": "text", "text": "Write a **script** for this"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
            ],
        ),
        _message(
            "a1",
            "u1",
            5,
            **_assistant(
                [
                    {"type": "thinking", "thinking": "The user wants a greeting function."},
                    {"type": "text", "text": MARKDOWN},
                    {
                        "type": "toolCall",
                        "id": "call_1",
                        "name": "bash",
                        "arguments": {"command": "ls -la src"},
                    },
                    {"type": "toolCall", "id": "call_2", "name": "read", "arguments": {"path": "src/app.py"}},
                ],
                stopReason="toolUse",
            ),
        ),
        _message(
            "r1",
            "a1",
            6,
            role="toolResult",
            toolCallId="call_1",
            toolName="bash",
            content=[{"type": "text", "text": "total 8\napp.py"}],
            isError=False,
        ),
        _message(
            "r2",
            "r1",
            7,
            role="toolResult",
            toolCallId="call_2",
            toolName="read",
            content=[{"type": "text", "text": "import os\nprint(os.getcwd())\n"}],
            isError=False,
        ),
        _message("a2", "r2", 8, **_assistant([{"type": "text", "text": "Done with branch A."}])),
        _message("u3", "r2", 20, role="user", content=[{"type": "text", "text": XSS}]),
        _message(
            "a3",
            "u3",
            21,
            **_assistant([], stopReason="error", errorMessage="upstream <b>failed</b>"),
        ),
        _message(
            "b1",
            "a3",
            22,
            role="bashExecution",
            command="echo hi",
            output="hi\n",
            exitCode=0,
            cancelled=False,
            truncated=False,
        ),
        _entry(
            "compaction",
            "c1",
            "b1",
            23,
            summary="## Goal\nGreet people.",
            firstKeptEntryId="u3",
            tokensBefore=4242,
            details={"readFiles": ["src/app.py"], "modifiedFiles": []},
        ),
        _entry("session_info", "n1", "c1", 24, name="Greeting script"),
        _entry("label", "l1", "n1", 25, targetId="u1", label="start"),
        _entry(
            "custom_message",
            "x1",
            "l1",
            26,
            customType="reminder",
            content="Remember the **tests**",
            display=True,
        ),
    ]


BRANCH_A_ONLY = "Done with branch A."
LEAF_BRANCH_ONLY = "Remember the"


def write(path: Path, extra_lines: list[str] | None = None) -> Path:
    lines = [json.dumps(header())] + [json.dumps(e) for e in entries()] + (extra_lines or [])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
