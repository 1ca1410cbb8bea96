"""Replaying the system messages of a transcript (reference §1.2).

The leading system message holds the initial prompt sections and tools; later ones patch them:
``sections`` entries replace (``None`` deletes), non-empty ``content`` appends, ``toolsAdded``
adds or redefines by name, ``toolsRemoved`` withdraws. Providers that cannot take system messages
mid-conversation send the replayed prompt once, at the top.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pi_host.protocol.messages import ToolDecl


@dataclass
class SystemState:
    contents: list[str] = field(default_factory=list)
    sections: dict[str, str] = field(default_factory=dict)
    tools: dict[str, ToolDecl] = field(default_factory=dict)

    def render(self) -> str:
        """The prompt text: contents, then section values in insertion order, blank-line joined."""
        parts = [c for c in self.contents if c] + [v for v in self.sections.values() if v]
        return "\n\n".join(parts)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(getattr(block, "text", "") for block in content or ())


def apply_system_message(state: SystemState, message: Any) -> SystemState:
    text = _content_text(message.content)
    if text:
        state.contents.append(text)
    for name, value in (message.sections or {}).items():
        if value is None:
            state.sections.pop(name, None)
        else:
            state.sections[name] = value
    for ref in message.tools_removed or ():  # removals first: a message may redefine a name
        state.tools.pop(ref.name, None)
    for tool in message.tools_added or ():
        state.tools[tool.name] = tool
    return state


def replay_system(messages: list[Any]) -> SystemState:
    """Apply every system message of ``messages`` in order."""
    state = SystemState()
    for message in messages:
        if getattr(message, "role", None) == "system":
            apply_system_message(state, message)
    return state


def patch_text(message: Any) -> str:
    """What a later system message says when a provider sends it in place (mid-conversation):
    its content, then the section values it sets, blank-line joined (deletions have no text)."""
    parts = [_content_text(message.content)]
    parts.extend(value for value in (message.sections or {}).values() if value)
    return "\n\n".join(part for part in parts if part)


def split_system(messages: list[Any], in_place: bool = False) -> tuple[str, list[Any]]:
    """``(prompt, other messages)`` for a provider request.

    Collapsed (``in_place`` false): every system message folds into the prompt, the list keeps
    the rest. In place: only the leading run of system messages renders as the prompt; later ones
    stay in the list where they occur (send them with :func:`patch_text`).
    """
    if not in_place:
        prompt = replay_system(messages).render()
        return prompt, [m for m in messages if getattr(m, "role", None) != "system"]
    count = 0
    for message in messages:
        if getattr(message, "role", None) != "system":
            break
        count += 1
    return replay_system(messages[:count]).render(), list(messages[count:])


def wrap_section(name: str, content: str) -> str:
    """Sections other than ``preamble`` are stored as ``<name>\\n...\\n</name>``."""
    if name == "preamble":
        return content
    return f"<{name}>\n{content}\n</{name}>"


def force_system_prompt(messages: list[Any], prompt: str) -> list[Any]:
    """``messages`` with every system message replaced by one leading message whose whole text is
    ``prompt`` (a ``before_agent_start`` replacement): providers send exactly that text, and the
    declared tools stay declared."""
    from pi_host.protocol.messages import SystemMessage

    tools = list(replay_system(messages).tools.values())
    head = SystemMessage(content=prompt, tools_added=tools or None)
    return [head, *(m for m in messages if getattr(m, "role", None) != "system")]
