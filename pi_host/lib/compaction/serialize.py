"""Conversation → plain text for a summarizer (reference §7.4 "Serialization").

``[User]: …``, ``[Assistant]: …``, ``[Assistant tool calls]: name(k=<json>, …); …`` and
``[Tool result]: …`` blocks separated by blank lines. Thinking is left out (it is long and the
answer already carries its conclusions); tool results are cut at 2000 characters with a note
saying how much was dropped.
"""

from __future__ import annotations

import json
from typing import Any

TOOL_RESULT_LIMIT = 2000


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content or ():
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "image":
            parts.append("[image]")
    return "\n".join(p for p in parts if p)


def _call(block: Any) -> str:
    args = ", ".join(
        f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in (block.arguments or {}).items()
    )
    return f"{block.name}({args})"


def serialize_message(message: Any) -> list[str]:
    role = getattr(message, "role", None)
    if role == "user":
        text = _text(message.content)
        return [f"[User]: {text}"] if text else []
    if role == "assistant":
        out = []
        text = "".join(b.text for b in message.content if getattr(b, "type", None) == "text").strip()
        if text:
            out.append(f"[Assistant]: {text}")
        calls = [b for b in message.content if getattr(b, "type", None) == "toolCall"]
        if calls:
            out.append("[Assistant tool calls]: " + "; ".join(_call(c) for c in calls))
        return out
    if role == "toolResult":
        text = _text(message.content)
        if len(text) > TOOL_RESULT_LIMIT:
            dropped = len(text) - TOOL_RESULT_LIMIT
            text = text[:TOOL_RESULT_LIMIT] + f"\n[... {dropped} more characters left out]"
        return [f"[Tool result]: {text}"]
    if role == "bashExecution":
        return [f"[User ran]: {message.command}\n{message.output or ''}".rstrip()]
    if role == "custom":
        text = _text(message.content)
        return [f"[User]: {text}"] if text else []
    if role == "branchSummary":
        return [f"[Branch summary]: {message.summary}"]
    if role == "compactionSummary":
        return [f"[Earlier summary]: {message.summary}"]
    return []


def serialize_conversation(messages: list[Any]) -> str:
    blocks: list[str] = []
    for message in messages:
        blocks.extend(serialize_message(message))
    return "\n\n".join(blocks)
