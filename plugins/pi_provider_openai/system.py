"""Replaying transcript system messages into one prompt (reference §1.2).

The leading system message holds the prompt's sections; later ones patch them. APIs without
mid-conversation system messages get the replayed prompt once, at the top ("collapsed").
"""

from __future__ import annotations

from typing import Any


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(getattr(block, "text", "") for block in content or ())


def render_prompt(messages: list[Any]) -> str:
    """Apply every system message in order; return content + sections joined by blank lines."""
    instructions: list[str] = []
    sections: dict[str, str] = {}
    for message in messages:
        if getattr(message, "role", None) != "system":
            continue
        text = _content_text(message.content)
        if text:
            instructions.append(text)
        for name, value in (message.sections or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
    parts = [*instructions, *sections.values()]
    return "\n\n".join(part for part in parts if part)


def patch_text(message: Any) -> str:
    """What a later system message says when it is sent in place: its content plus the sections
    it sets (deletions have no text)."""
    parts = [_content_text(message.content)]
    parts.extend(value for value in (message.sections or {}).values() if value)
    return "\n\n".join(part for part in parts if part)


def split_system(messages: list[Any], in_place: bool) -> tuple[str, list[Any]]:
    """(prompt, other messages). With ``in_place`` the first system message renders as the prompt
    and later ones stay in the list; otherwise every system message folds into the prompt."""
    if not in_place:
        return render_prompt(messages), [m for m in messages if getattr(m, "role", None) != "system"]
    leading: list[Any] = []
    rest: list[Any] = []
    for message in messages:
        if getattr(message, "role", None) == "system" and not rest:
            leading.append(message)
        else:
            rest.append(message)
    return render_prompt(leading), rest
