"""Summaries made of the user's own words."""

from __future__ import annotations

from typing import Any

MAX_REQUEST_CHARS = 500
"""Longer requests are shortened; the start usually says what was wanted."""


def user_requests(messages: list[Any]) -> list[str]:
    """The text of each user message (and bash command the user ran), shortened, in order."""
    out = []
    for message in messages:
        role = getattr(message, "role", None)
        if role == "user":
            content = message.content
            text = (
                content
                if isinstance(content, str)
                else " ".join(b.text for b in content if getattr(b, "type", None) == "text")
            )
        elif role == "bashExecution":
            text = f"!{message.command}"
        else:
            continue
        text = " ".join(text.split())
        if len(text) > MAX_REQUEST_CHARS:
            text = text[: MAX_REQUEST_CHARS - 1] + "…"
        if text:
            out.append(text)
    return out


def _numbered(requests: list[str]) -> str:
    return "\n".join(f"{i}. {text}" for i, text in enumerate(requests, 1)) or "(none)"


def compaction_summary(preparation: Any) -> dict[str, Any]:
    parts = []
    if preparation.previous_summary:
        parts.append("## Earlier summary\n" + preparation.previous_summary.strip())
    requests = user_requests(preparation.messages_to_summarize + preparation.turn_prefix_messages)
    parts.append("## User requests\n" + _numbered(requests))
    if preparation.custom_instructions:
        parts.append("## Focus\n" + preparation.custom_instructions.strip())
    summary = "\n\n".join(parts) + preparation.file_ops.format()
    return {"summary": summary, "details": preparation.file_ops.details()}


def branch_summary(preparation: Any) -> dict[str, Any]:
    summary = "## Requests on the branch that was left\n" + _numbered(user_requests(preparation.messages))
    summary += preparation.file_ops.format()
    return {"summary": summary, "details": preparation.file_ops.details()}
