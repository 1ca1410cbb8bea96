"""System messages sent where they occur in the conversation, and native tool changes.

Models whose compat has ``supportsMidConvoSystemMessages`` take ``system`` messages inside
``messages``: the leading system message becomes the request's ``system`` prompt and each later
one is sent in place, with its text: added content, and each section change named so the model
can relate it to the leading prompt (as pi 1.6.0 does, in pi-host's own words).

When the model also has ``supportsMidConvoToolChanges`` and the leading system message declares
tools, tool changes are native: the request's ``tools`` stay the initial tools plus a deferred
placeholder tool, forever, and a later system message withdraws tools with ``tool_removal``
blocks and (re)defines them by value with ``tool_addition`` blocks (the ``inline-tools`` beta).
The cached prefix then survives every tool change: Anthropic adds hidden scaffolding for in-line
tool changes, and declaring the placeholder from the first request keeps that scaffolding in the
prefix, so the first change does not miss the cache. Anthropic refuses a tool list where every
tool is deferred, which is why a conversation that starts without tools does not use them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pi_host.lib.llm.transform import scrub_surrogates

BETA_INLINE_TOOLS = "inline-tools-2026-09-15"
PLACEHOLDER_TOOL_NAME = "__pi_deferred_placeholder__"
PLACEHOLDER_DESCRIPTION = "Reserved placeholder. Never available. Never call this."
ToolConverter = Callable[[list[Any]], list[dict[str, Any]]]


def placeholder_tool() -> dict[str, Any]:
    """pi's placeholder, field for field: it is part of the cached prefix, so it never changes."""
    return {
        "name": PLACEHOLDER_TOOL_NAME,
        "description": PLACEHOLDER_DESCRIPTION,
        "input_schema": {"type": "object", "properties": {}, "required": []},
        "defer_loading": True,
    }


def content_text(content: Any) -> str:
    """A message's text; text blocks are joined by newlines."""
    if isinstance(content, str):
        return content
    return "\n".join(getattr(block, "text", "") for block in content or () if block.type == "text")


def prompt_text(message: Any) -> str:
    """The whole prompt a leading system message holds: its content, then its section values."""
    parts = [content_text(message.content)]
    parts.extend(value for value in (message.sections or {}).values() if value is not None)
    return "\n\n".join(part for part in parts if part)


def update_text(message: Any) -> str:
    """What a later system message says in place: its content, then each section it sets or
    removes, named (a removal has no text of its own, so it is announced)."""
    parts = []
    text = content_text(message.content)
    if text:
        parts.append(text)
    # pi-host's own wording (model-facing text; pi's framing differs in words, not in content)
    for name, value in (message.sections or {}).items():
        if value is None:
            parts.append(f'Section "{name}" of the system prompt no longer applies.')
        else:
            parts.append(f'Section "{name}" of the system prompt changed to:\n\n{value}')
    return "\n\n".join(parts)


def split_leading(messages: list[Any]) -> tuple[Any | None, list[Any]]:
    """``(leading system message or None, the rest)``. Only the first message counts as the
    prompt: a second system message at the start is a change sent in place, as in pi."""
    if messages and getattr(messages[0], "role", None) == "system":
        return messages[0], list(messages[1:])
    return None, list(messages)


def initial_tools(head: Any | None, messages: list[Any], context_tools: list[Any] | None) -> list[Any]:
    """The tools declared with the prompt. Tools of the context's current list that no system
    message declares (a context built by hand, not by a session) are declared with them."""
    tools = list(head.tools_added or ()) if head is not None else []
    declared = {
        tool.name for m in messages if getattr(m, "role", None) == "system" for tool in m.tools_added or ()
    }
    tools.extend(tool for tool in context_tools or () if tool.name not in declared)
    return tools


def current_tools(messages: list[Any]) -> list[Any]:
    """The tools available after every system message, in declaration order. Each message's
    removals apply before its additions: a changed definition is a removal and an addition of the
    same name in one message (pi's sessions record it so), and it must stay available."""
    tools: dict[str, Any] = {}
    for message in messages:
        if getattr(message, "role", None) != "system":
            continue
        for ref in message.tools_removed or ():
            tools.pop(ref.name, None)
        for tool in message.tools_added or ():
            tools[tool.name] = tool
    return list(tools.values())


def system_message(
    message: Any, tool_changes: ToolConverter | None, rename: Callable[[str], str]
) -> dict | None:
    """A later system message as sent in place, or None when it says nothing on the wire.

    ``tool_changes`` converts tool definitions when tool changes are native (else tool changes
    reach the model only through the request's current ``tools``)."""
    blocks: list[dict[str, Any]] = []
    text = update_text(message)
    if text:
        blocks.append({"type": "text", "text": scrub_surrogates(text)})
    if tool_changes is not None:
        added = list(message.tools_added or ())
        redefined = {tool.name for tool in added}
        for ref in message.tools_removed or ():
            if ref.name in redefined:
                continue  # the new definition under the same name replaces the old one
            blocks.append(
                {"type": "tool_removal", "tool": {"type": "tool_reference", "name": rename(ref.name)}}
            )
        for definition in tool_changes(added) if added else ():
            blocks.append(
                {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": definition}}
            )
    return {"role": "system", "content": blocks} if blocks else None
