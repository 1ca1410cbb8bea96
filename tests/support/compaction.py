"""Shared pieces for compaction tests: a scripted faux provider that tells summary requests
from ordinary turns, a tool with large output, and session builders."""

from __future__ import annotations

from typing import Any

import pi_provider_faux as faux

import pi_host
from pi_host import hookimpl
from pi_host.lib.sessions.store import MemoryStore
from pi_host.loop.tools import Tool, ToolResult
from pi_host.protocol import TextContent

SMALL_SETTINGS = {
    "compaction": {"modelOverrides": {"faux/faux-small": {"reserveTokens": 2000, "keepRecentTokens": 1500}}},
    "retry": {"baseDelayMs": 1},
}


def is_summary_request(context: Any) -> bool:
    first = context.messages[0] if context.messages else None
    return (
        getattr(first, "role", None) == "system"
        and not context.tools
        and "hand-over notes" in str(first.content)
    )


class Router:
    """Answers summary requests with ``summaries`` (in order, the last repeats) and every other
    request with the next of ``turns``. Records both kinds of request."""

    def __init__(self, turns: list[Any], summaries: list[Any] | None = None) -> None:
        self.turns = list(turns)
        self.summaries = list(summaries or ["## Goal\nscripted summary"])
        self.summary_requests: list[Any] = []
        self.turn_requests: list[Any] = []

    def __call__(self, context: Any) -> dict[str, Any]:
        if is_summary_request(context):
            self.summary_requests.append(context)
            item = self.summaries.pop(0) if len(self.summaries) > 1 else self.summaries[0]
        else:
            self.turn_requests.append(context)
            item = self.turns.pop(0) if self.turns else {"text": "done"}
        if callable(item):
            item = item(context)
        return item if isinstance(item, dict) else {"text": item}

    def install(self, count: int = 200) -> Router:
        faux.set_responses([self] * count)
        return self


class DumpTool(Tool):
    name = "dump"
    description = "Returns `size` characters of filler text."
    parameters = {
        "type": "object",
        "properties": {"size": {"type": "number"}, "path": {"type": "string"}},
        "required": ["size"],
    }

    async def execute(self, tool_call_id, args, signal, on_update, ctx):
        size = int(args["size"])
        return ToolResult(content=[TextContent(text=("lorem ipsum " * (size // 12 + 1))[:size])])


class DumpPlugin:
    __name__ = "dump-tool"

    @hookimpl
    def register_tools(self):
        return [DumpTool()]


def dump_call(size: int, path: str | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"size": size}
    if path:
        args["path"] = path
    return {"toolCalls": [{"name": "dump", "arguments": args}]}


async def small_session(
    plugins: list[Any] | None = None, settings: dict | None = None, store: Any = None, **kw
):
    return await pi_host.create_session(
        model=kw.pop("model", "faux/faux-small"),
        plugins=[DumpPlugin(), *(plugins or [])],
        settings=SMALL_SETTINGS if settings is None else settings,
        store=store if store is not None else MemoryStore("."),
        tools=kw.pop("tools", ["dump"]),
        **kw,
    )


def collect(session: Any) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    session.subscribe(events.append)
    return events


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]
