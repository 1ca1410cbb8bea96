"""Shared test helpers: stand-in tools with prompt snippets, and a session factory."""

from __future__ import annotations

from typing import Any

import pi_host
from pi_host import hookimpl
from pi_host.loop.tools import Tool, ToolResult


class FakeRead(Tool):
    name = "read"
    description = "Read a file"
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    prompt_snippet = "Read a file's contents"
    prompt_guidelines = ["Prefer read over cat or sed for looking at files."]

    async def execute(self, tool_call_id, args, signal, on_update, ctx):
        with open(args["path"], encoding="utf-8") as handle:
            return ToolResult.text(handle.read())


class FakeBash(Tool):
    name = "bash"
    description = "Run a command"
    parameters = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
    prompt_snippet = "Run shell commands"
    prompt_guidelines = ["Prefer read over cat or sed for looking at files.", "Quote paths with spaces."]

    async def execute(self, tool_call_id, args, signal, on_update, ctx):
        return ToolResult.text("ok")


class FakeTools:
    def __init__(self, *tools: type[Tool]) -> None:
        self.tools = tools or (FakeRead, FakeBash)

    @hookimpl
    def register_tools(self, ctx):
        return [tool() for tool in self.tools]


async def make_session(
    cwd: Any, flags: dict[str, Any] | None = None, tools: list[str] | None = None, **kwargs: Any
):
    kwargs.setdefault("approve", True)  # these projects' .pi resources are the point of the tests
    return await pi_host.create_session(
        model="faux/faux-1",
        cwd=str(cwd),
        flags=flags or {},
        tools=["read", "bash"] if tools is None else tools,
        plugins=[FakeTools(), *kwargs.pop("plugins", [])],
        **kwargs,
    )
