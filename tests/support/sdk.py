"""Small tools and helpers shared by the host tests."""

from __future__ import annotations

import asyncio
from typing import Any

import pi_host
from pi_host import hookimpl
from pi_host.loop.tools import Tool, ToolError, ToolResult
from pi_host.protocol import TextContent


class EchoTool(Tool):
    name = "echo"
    description = "Echo text back"
    parameters = {
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "times": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["text"],
    }

    async def execute(self, tool_call_id, args, signal, on_update, ctx):
        if on_update:
            await on_update(ToolResult(content=[TextContent(text="partial")]))
        return ToolResult(
            content=[TextContent(text=args["text"] * args.get("times", 1))], details={"args": args}
        )


class SleepTool(Tool):
    """Sleeps ``seconds`` (abortable), then returns its label."""

    name = "sleep"
    description = "Sleep"
    parameters = {
        "type": "object",
        "properties": {"seconds": {"type": "number"}, "label": {"type": "string"}},
    }

    def __init__(self, log: list[str] | None = None) -> None:
        self.log = log if log is not None else []

    async def execute(self, tool_call_id, args, signal, on_update, ctx):
        self.log.append(f"start:{args.get('label')}")
        await pi_host.protocol.abort.race(signal, asyncio.sleep(args.get("seconds", 0)))
        self.log.append(f"end:{args.get('label')}")
        return ToolResult(content=[TextContent(text=str(args.get("label")))])


class FailTool(Tool):
    name = "fail"
    description = "Always fails"
    parameters = {"type": "object", "properties": {}}

    async def execute(self, tool_call_id, args, signal, on_update, ctx):
        raise ToolError("it broke")


class SequentialTool(SleepTool):
    name = "serial"
    execution_mode = "sequential"


class ToolsPlugin:
    def __init__(self, *tools: Tool) -> None:
        self.tools = tools
        self.__name__ = "test-tools"

    @hookimpl
    def register_tools(self):
        return list(self.tools)


async def new_session(*tools: Tool, plugins: list[Any] = (), **kwargs: Any):
    kwargs.setdefault("model", "faux/faux-1")
    kwargs.setdefault("tools", [t.name for t in tools])
    kwargs.setdefault("settings", {})
    return await pi_host.create_session(plugins=[ToolsPlugin(*tools), *plugins], **kwargs)


def record(session) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    session.subscribe(events.append)
    return events


def shape(events: list[dict[str, Any]]) -> list[str]:
    """Event types with message roles, runs of message_update collapsed."""
    out: list[str] = []
    for event in events:
        kind = event["type"]
        if kind in ("message_start", "message_end"):
            kind = f"{kind}({event['message'].role})"
        if kind == "message_update" and out and out[-1] == "message_update*":
            continue
        if kind == "message_update":
            kind = "message_update*"
        out.append(kind)
    return out
