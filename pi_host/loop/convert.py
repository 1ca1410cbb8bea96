"""Projecting coding-agent roles onto provider roles (``convertToLlm``, reference §1.6).

``bashExecution``, ``custom``, ``branchSummary`` and ``compactionSummary`` messages are sent as user
messages; the four provider roles pass through; unknown roles are dropped.
"""

from __future__ import annotations

from typing import Any

from pi_host.protocol import ImageContent, TextContent, UserMessage

_PASS_THROUGH = frozenset({"system", "user", "assistant", "toolResult"})

COMPACTION_PREFIX = "The conversation history before this point was compacted into the following summary:"
BRANCH_PREFIX = "The following is a summary of a branch that this conversation came back from:"


def bash_execution_text(message: Any) -> str:
    parts = [f"Ran `{message.command}`"]
    output = message.output or ""
    parts.append(f"```\n{output.rstrip(chr(10))}\n```" if output else "(no output)")
    text = "\n".join(parts)
    if message.cancelled:
        text += "\n\n(command cancelled)"
    elif message.exit_code not in (None, 0):
        text += f"\n\nCommand exited with code {message.exit_code}"
    if message.truncated and message.full_output_path:
        text += f"\n\n[Output truncated. Full output: {message.full_output_path}]"
    return text


def convert_to_llm(messages: list[Any], block_images: bool = False) -> list[Any]:
    out: list[Any] = []
    for message in messages:
        role = getattr(message, "role", None)
        if role in _PASS_THROUGH:
            converted = message
        elif role == "bashExecution":
            if message.exclude_from_context:
                continue
            converted = UserMessage(
                content=[TextContent(text=bash_execution_text(message))], timestamp=message.timestamp
            )
        elif role == "custom":
            content = message.content
            if isinstance(content, str):
                content = [TextContent(text=content)]
            converted = UserMessage(content=list(content), timestamp=message.timestamp)
        elif role == "branchSummary":
            text = f"{BRANCH_PREFIX}\n\n<summary>\n{message.summary}</summary>"
            converted = UserMessage(content=[TextContent(text=text)], timestamp=message.timestamp)
        elif role == "compactionSummary":
            text = f"{COMPACTION_PREFIX}\n\n<summary>\n{message.summary}\n</summary>"
            converted = UserMessage(content=[TextContent(text=text)], timestamp=message.timestamp)
        else:
            continue
        if block_images:
            converted = _without_images(converted)
        out.append(converted)
    return out


def _without_images(message: Any) -> Any:
    content = getattr(message, "content", None)
    if not isinstance(content, list) or not any(isinstance(b, ImageContent) for b in content):
        return message
    blocks = [
        TextContent(text="(image omitted: image reading is disabled)") if isinstance(b, ImageContent) else b
        for b in content
    ]
    return message.model_copy(update={"content": blocks})
