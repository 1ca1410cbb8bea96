"""The ``mcp_servers`` system-prompt section: the servers whose tools are not declared to the model.

A deferred tool is found only through ``tool_search``, which does not say which servers exist, so
the model learns of them here: one line per enabled server with deferred tools, sorted by name,
``- mcp__<server> (tool_search): <summary>``. The summary is the first line of the configured
``description``, else of the instructions the server sent when it connected. As in pi, the section
stays within 4,096 characters: summaries shrink (at most 250 characters each), and when the
server lines alone do not fit, the last ones are counted in a closing line instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pi_host.protocol.transcript import wrap_section
from pi_mcp.config import namespace

NAME = "mcp_servers"
MAX_CHARS = 4096
MAX_SUMMARY_CHARS = 250
INTRO = (
    "MCP servers whose tools are not declared to you. "
    "Load the tools of `tool_search` servers with `tool_search`."
)


@dataclass
class ListedServer:
    name: str
    description: str = ""
    instructions: str = ""


def summary(description: str, instructions: str) -> str:
    text = (description or "").strip() or (instructions or "").strip()
    return text.split("\n", 1)[0].strip()


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return "" if limit <= 1 else text[: limit - 1].rstrip() + "\u2026"


def _omitted(count: int) -> list[str]:
    if count <= 0:
        return []
    return [f"- \u2026 {count} more server{'' if count == 1 else 's'}; find their tools with tool_search"]


def render(servers: Iterable[ListedServer]) -> str | None:
    """The section's text (unwrapped), or None when no server is listed."""
    listed = sorted(servers, key=lambda s: s.name)
    if not listed:
        return None
    heads = [f"- {namespace(s.name)} (tool_search)" for s in listed]

    def size(kept: int) -> int:
        return len("\n".join([INTRO, *heads[:kept], *_omitted(len(listed) - kept)]))

    kept = len(listed)
    while kept > 0 and size(kept) > MAX_CHARS:
        kept -= 1
    room = 0 if kept == 0 else min(MAX_SUMMARY_CHARS, (MAX_CHARS - size(kept)) // kept - 2)
    lines = []
    for server, head in zip(listed[:kept], heads, strict=False):
        text = _shorten(summary(server.description, server.instructions), room) if room > 0 else ""
        lines.append(f"{head}: {text}" if text else head)
    return "\n".join([INTRO, *lines, *_omitted(len(listed) - kept)])


def section(servers: Iterable[ListedServer]) -> dict[str, str | None]:
    """``{"mcp_servers": <wrapped text>}``, or ``{"mcp_servers": None}`` to remove the section."""
    text = render(servers)
    return {NAME: wrap_section(NAME, text) if text is not None else None}
