"""Declaring an agent's prompt and tools in its transcript (pi: the transcript owns both).

Before the first request the transcript gets one leading system message with the prompt and
every tool; afterwards a tool added, redefined or withdrawn is announced in a patch system
message, so the history before it stays as it was sent (and cached).
"""

from __future__ import annotations

from typing import Any

from pi_host.protocol.messages import SystemMessage, ToolDecl, ToolRef
from pi_host.protocol.transcript import replay_system


def tool_changes(
    declared: dict[str, ToolDecl], current: list[ToolDecl]
) -> tuple[list[ToolDecl], list[ToolRef]]:
    """``(added or redefined, withdrawn)`` going from the ``declared`` tools to ``current``."""
    wanted = {tool.name: tool for tool in current}
    added = [
        tool
        for name, tool in wanted.items()
        if name not in declared or declared[name].to_json() != tool.to_json()
    ]
    removed = [ToolRef(name=name) for name in declared if name not in wanted]
    return added, removed


def declare(
    context: list[Any], pending: list[Any], system_prompt: str | None, tools: list[ToolDecl]
) -> list[Any]:
    """``pending`` with the system message the next request needs in front, if any."""
    if not any(getattr(m, "role", None) == "system" for m in context) and not any(
        getattr(m, "role", None) == "system" for m in pending
    ):
        if not system_prompt and not tools:
            return pending
        return [SystemMessage(content=system_prompt or "", tools_added=list(tools) or None), *pending]
    added, removed = tool_changes(replay_system([*context, *pending]).tools, tools)
    if not added and not removed:
        return pending
    return [SystemMessage(content="", tools_added=added or None, tools_removed=removed or None), *pending]
