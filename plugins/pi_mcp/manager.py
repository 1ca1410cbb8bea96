"""The MCP servers of one session: connections started in the background, their tools added to
the session as ordinary tools (so ``tool_call`` / ``tool_result`` apply), ``tool_search`` for
deferred ones, one line when a server fails or goes away, ``mcp_servers_change`` for plugins."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import re
import sys
import tempfile
from typing import Any

from pi_host.lib.toolkit.capabilities import capability_from_annotations
from pi_host.loop.tools import Tool, ToolResult
from pi_mcp import prompt_section
from pi_mcp.client import Connection
from pi_mcp.config import ServerConfig, tool_name
from pi_mcp.resources import resource_tools

MAX_TEXT_BYTES = 20480
DIRECT_WAIT_S = 10.0


class McpTool(Tool):
    """``mcp__<server>__<tool>``: one tool of one server."""

    execution_mode = None

    def __init__(self, connection: Connection, info: Any, name: str, exposure: str) -> None:
        self.connection = connection
        self.server_tool = info.name
        self.name = name
        self.label = f"{connection.config.name}: {info.name}"
        self.description = info.description or f"{info.name} (MCP server {connection.config.name})"
        schema = dict(info.input_schema or {})
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        self.parameters = schema
        self.exposure = exposure
        annotations = getattr(info, "annotations", None)
        self.annotations = (
            annotations.model_dump(by_alias=True, exclude_none=True) if annotations is not None else {}
        )
        self.capability = capability_from_annotations(self.annotations)  # readOnlyHint: plan mode runs it

    async def execute(self, tool_call_id, args, signal, on_update, ctx):  # noqa: ANN001
        result = await self.connection.call(self.server_tool, args)
        return to_tool_result(result, self.connection.config.name, self.server_tool)


def _block(block: Any) -> dict[str, Any]:
    data = block.model_dump(by_alias=True, exclude_none=True) if hasattr(block, "model_dump") else dict(block)
    kind = data.get("type")
    if kind == "text":
        return {"type": "text", "text": data.get("text", "")}
    if kind == "image":
        return {"type": "image", "data": data.get("data", ""), "mimeType": data.get("mimeType", "")}
    if kind == "audio":
        return {"type": "text", "text": f"[audio {data.get('mimeType')} omitted]"}
    if kind == "resource_link":
        return {"type": "text", "text": f"{data.get('name')}: {data.get('uri')}"}
    if kind == "resource":
        resource = data.get("resource") or {}
        if "text" in resource:
            return {"type": "text", "text": resource["text"]}
        mime = resource.get("mimeType") or ""
        if mime.startswith("image/"):
            return {"type": "image", "data": resource.get("blob", ""), "mimeType": mime}
        return {
            "type": "text",
            "text": f"[binary resource {resource.get('uri')} ({mime or 'unknown type'}) omitted]",
        }
    return {"type": "text", "text": f"[unsupported MCP content {kind}]"}


def to_tool_result(result: Any, server: str, tool: str) -> ToolResult:
    content = [_block(b) for b in result.content or []]
    structured = getattr(result, "structured_content", None)
    if not content and structured is not None:
        content = [{"type": "text", "text": json.dumps(structured, indent=2)}]
    details: dict[str, Any] = {"server": server, "tool": tool}
    content, saved = limit_text(content)
    if saved:
        details["fullOutputPath"] = saved
    structured = limit_structured(structured, details)
    return ToolResult(
        content=content, details=details, structured_content=structured, is_error=bool(result.is_error)
    )


def limit_structured(structured: Any, details: dict[str, Any]) -> Any:
    """Structured content over the text limit is saved to a file instead of riding along in every
    event (a JSON-mode line of 50 MB): ``details.structuredContentPath`` names the file."""
    if structured is None:
        return None
    import orjson

    try:
        data = orjson.dumps(structured)
    except TypeError:
        return structured
    if len(data) <= MAX_TEXT_BYTES:
        return structured
    details["structuredContentOmitted"] = f"{len(data)} bytes, over the {MAX_TEXT_BYTES // 1024}KB limit"
    try:
        fd, path = tempfile.mkstemp(prefix="pi-mcp-", suffix=".json")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        details["structuredContentPath"] = path
    except OSError:
        pass
    return None


def truncate_middle(text: str, max_bytes: int = MAX_TEXT_BYTES) -> str | None:
    """The text with its middle replaced by ``…N chars truncated…`` (None when it fits)."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return None

    def boundary(index: int) -> bool:
        return index >= len(data) or (data[index] & 0xC0) != 0x80

    head_end = max_bytes // 2
    while head_end > 0 and not boundary(head_end):
        head_end -= 1
    tail_start = len(data) - (max_bytes - max_bytes // 2)
    while tail_start < len(data) and not boundary(tail_start):
        tail_start += 1
    removed = len(data[head_end:tail_start].decode("utf-8"))
    head, tail = data[:head_end].decode("utf-8"), data[tail_start:].decode("utf-8")
    return f"{head}\u2026{removed} chars truncated\u2026{tail}"


def limit_text(content: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str | None]:
    combined = "\n".join(b["text"] for b in content if b.get("type") == "text")
    shortened = truncate_middle(combined)
    if shortened is None:
        return content, None
    total_bytes = len(combined.encode("utf-8"))
    lines = combined.count("\n") + 1 - (1 if combined.endswith("\n") else 0)
    path = None
    try:
        fd, path = tempfile.mkstemp(prefix="pi-mcp-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(combined)
        where = f"\n\n[Full output: {path} (read it with offset/limit)]"
    except OSError as exc:
        path = None
        where = f"\n\n[Could not save the full output: {exc}]"
    text = (
        f"Warning: truncated output (original token count: {math.ceil(total_bytes / 4)})\n"
        f"Total output lines: {lines}\n\n{shortened}{where}"
    )
    return [{"type": "text", "text": text}, *(b for b in content if b.get("type") == "image")], path


class ToolSearch(Tool):
    name = "tool_search"
    label = "tool_search"
    description = (
        "Search the tools of MCP servers that are not declared yet. Matching tools are loaded and "
        "can be called from the next model call."
    )
    parameters = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Words to look for in tool names and descriptions"},
            "limit": {"type": "integer", "description": "Most tools to load (default 5)"},
        },
        "required": ["query"],
    }
    prompt_snippet = "find and load MCP tools that are not declared yet"
    capability = "read"  # it only changes which tools are declared

    def __init__(self, manager: McpManager) -> None:
        self.manager = manager

    async def execute(self, tool_call_id, args, signal, on_update, ctx):  # noqa: ANN001
        await self.manager.wait_all()
        found = self.manager.search(str(args.get("query") or ""), int(args.get("limit") or 5))
        if not found:
            return ToolResult.text("No matching MCP tools.", details={"tools": []})
        self.manager.load(found, _running_loop_tools())
        lines = [f"Loaded {len(found)} tool{'s' if len(found) != 1 else ''}:"]
        lines += [f"- {t.name}: {t.description.splitlines()[0] if t.description else ''}" for t in found]
        return ToolResult.text("\n".join(lines), details={"tools": [t.name for t in found]})


def _running_loop_tools() -> dict[str, Any] | None:
    """The tool table of the agent loop that runs this call, so a loaded tool is declared from the
    next model call of this run (the session's own table applies from the next run)."""
    from pi_host.loop.loop import AgentLoop

    frame = sys._getframe(1)
    for _ in range(12):
        if frame is None:
            return None
        owner = frame.f_locals.get("self")
        if isinstance(owner, AgentLoop):
            return owner.config.tools
        frame = frame.f_back
    return None


class McpManager:
    def __init__(self, ctx: Any, servers: list[ServerConfig], errors: list[str]) -> None:
        self.ctx = ctx
        self.session = ctx.session
        self.connections = {s.name: Connection(s, ctx.cwd, self._changed, self.warn) for s in servers}
        self.errors = errors
        self.tools: dict[str, McpTool] = {}
        self._reported: set[tuple[str, str]] = set()
        self._said_codemode = False
        self._search = ToolSearch(self)
        self._resource_tools = {tool.name: tool for tool in resource_tools(self)}
        self._tasks: set[asyncio.Task[Any]] = set()

    # --- life -------------------------------------------------------------------------------

    def start(self) -> None:
        for line in self.errors:
            self.warn(f"MCP config error: {line}")
        for connection in self.connections.values():
            exposures = self._exposures(connection.config)
            if connection.config.enabled and "codemode" in exposures and not self._said_codemode:
                self._said_codemode = True
                self.warn(
                    "MCP: codemode is not available in pi-host; codemode tools are deferred "
                    "(found with tool_search)"
                )
            connection.start()
        if any(
            c.config.enabled and {"codemode", "deferred"} & self._exposures(c.config)
            for c in self.connections.values()
        ):
            self._add_tool(self._search, active=True)

    async def close(self) -> None:
        await asyncio.gather(*(c.stop() for c in self.connections.values()), return_exceptions=True)

    async def wait_all(self) -> None:
        await asyncio.gather(*(c.wait(c.config.timeout) for c in self.connections.values()))

    async def wait_direct(self) -> None:
        """The first prompt waits up to :data:`DIRECT_WAIT_S` for servers with direct tools, as pi
        does; one still starting then is named in one line (its own timeout may be longer), and
        the prompt goes on without its tools."""
        self.reconnect_signed_in()
        waiting = [
            c
            for c in self.connections.values()
            if c.state == "connecting" and "direct" in self._exposures(c.config)
        ]
        if not waiting:
            return
        await asyncio.gather(*(c.wait(DIRECT_WAIT_S) for c in waiting))
        for connection in waiting:
            name = connection.config.name
            if connection.state == "connecting" and (name, "slow") not in self._reported:
                self._reported.add((name, "slow"))
                self.warn(
                    f'MCP server "{name}" is still starting after {DIRECT_WAIT_S:g}s (no answer to '
                    "initialize yet); this prompt goes on without its tools"
                )

    def reconnect_signed_in(self) -> None:
        """Servers waiting for a sign-in whose credentials were stored since (``pi mcp login``, in
        another process too) connect again: a session uses new credentials on its next turn."""
        for connection in self.connections.values():
            if connection.credentials_changed():
                connection.start()

    async def restart(self, name: str | None = None) -> list[str]:
        chosen = [c for n, c in self.connections.items() if name in (None, n)]
        for connection in chosen:
            await connection.restart()
        await asyncio.gather(*(c.wait(c.config.timeout) for c in chosen))
        return [c.config.name for c in chosen]

    # --- tools ------------------------------------------------------------------------------

    @staticmethod
    def _exposures(config: ServerConfig) -> set[str]:
        found = {config.exposure, *config.tool_exposure.values()}
        return {"deferred" if e == "codemode" else e for e in found} | (
            {"codemode"} if "codemode" in found else set()
        )

    def _add_tool(self, tool: Tool, active: bool) -> None:
        session = self.session
        if getattr(session.config, "no_tools", False):
            return
        session.all_tools[tool.name] = tool
        if active:
            session.active_tools[tool.name] = tool

    def _drop_tool(self, name: str) -> None:
        self.session.all_tools.pop(name, None)
        self.session.active_tools.pop(name, None)

    def _register(self, connection: Connection) -> None:
        config = connection.config
        taken = set(self.session.all_tools) - {n for n, t in self.tools.items() if t.connection is connection}
        for info in connection.tools:
            exposure = config.exposure_of(info.name)
            if exposure == "codemode":
                exposure = "deferred"
            tool = McpTool(connection, info, tool_name(config.name, info.name, taken), exposure)
            taken.add(tool.name)
            self.tools[tool.name] = tool
            if exposure != "hidden":
                self._add_tool(tool, active=exposure == "direct")

    def _unregister(self, connection: Connection) -> None:
        for name in [n for n, t in self.tools.items() if t.connection is connection]:
            del self.tools[name]
            self._drop_tool(name)

    def resource_connections(self) -> list[Connection]:
        """Connected, enabled, not hidden servers that offer resources."""
        return [
            c
            for c in self.connections.values()
            if c.state == "connected" and c.resources and c.config.enabled and c.config.exposure != "hidden"
        ]

    def _sync_resource_tools(self) -> None:
        """The resource tools exist while a server offers resources; declared when one of those
        servers is ``direct``, else deferred (the widest exposure among them, as pi)."""
        servers = self.resource_connections()
        direct = any(c.config.exposure == "direct" for c in servers)
        for tool in self._resource_tools.values():
            if not servers:
                self._drop_tool(tool.name)
                continue
            tool.exposure = "direct" if direct else "deferred"
            self._add_tool(tool, active=direct or tool.name in self.session.active_tools)

    def prompt_section(self) -> dict[str, str | None]:
        """The ``mcp_servers`` system-prompt section (None removes it): the enabled servers whose
        tools are deferred, with their summaries."""
        listed = [
            prompt_section.ListedServer(c.config.name, c.config.description or "", c.instructions or "")
            for c in self.connections.values()
            if c.config.enabled and {"deferred", "codemode"} & self._exposures(c.config)
        ]
        return prompt_section.section(listed)

    def search(self, query: str, limit: int) -> list[Tool]:
        words = [w for w in re.split(r"[^a-z0-9]+", query.lower()) if w]
        scored = []
        for tool in [*self.tools.values(), *self._resource_tools.values()]:
            if getattr(tool, "exposure", None) != "deferred" or tool.name not in self.session.all_tools:
                continue
            connection = getattr(tool, "connection", None)
            haystack = " ".join(
                [
                    tool.name,
                    getattr(tool, "server_tool", ""),
                    tool.description,
                    connection.config.description if connection is not None else "",
                ]
            ).lower()
            score = sum(haystack.count(w) + (3 if w in tool.name.lower() else 0) for w in words)
            if score or not words:
                scored.append((-score, tool.name, tool))
        return [t for _s, _n, t in sorted(scored)[: max(1, limit)]]

    def load(self, tools: list[Tool], running: dict[str, Any] | None) -> None:
        for tool in tools:
            self.session.active_tools[tool.name] = tool
            if running is not None:
                running[tool.name] = tool

    # --- reporting --------------------------------------------------------------------------

    def warn(self, line: str) -> None:
        self.session.warn(line)

    def _changed(self, connection: Connection) -> None:
        name, state = connection.config.name, connection.state
        if state == "connected":
            self._unregister(connection)
            self._register(connection)
            self._reported.discard((name, "failed"))
            self._reported.discard((name, "disconnected"))
            self._reported.discard((name, "needs-auth"))
        else:
            self._unregister(connection)
        self._sync_resource_tools()
        if state == "needs-auth" and (name, state) not in self._reported:
            self._reported.add((name, state))
            self.warn(connection.sign_in_hint(in_session=bool(getattr(self.ctx, "has_ui", False))))
        if state in ("failed", "disconnected") and (name, state) not in self._reported:
            self._reported.add((name, state))
            verb = "failed to start" if state == "failed" else "disconnected"
            tail = connection.stderr_tail()
            more = f" ({tail[-1].strip()[:200]})" if tail and state == "failed" else ""
            self.warn(f'MCP server "{name}" {verb}: {connection.error}{more}; its tools are unavailable')
        self._fire()

    def status(self) -> list[dict[str, Any]]:
        servers = []
        for connection in self.connections.values():
            config = connection.config
            entry: dict[str, Any] = {
                "name": config.name,
                "scope": config.scope,
                "source": config.source,
                "enabled": config.enabled,
                "exposure": config.exposure,
                "transport": config.transport,
                "state": connection.state,
                "tools": [t.name for t in connection.tools],
            }
            if connection.error and connection.state != "connected":
                entry["error"] = connection.error
            servers.append(entry)
        return servers

    def _fire(self) -> None:
        host = self.session.host
        if not host.has("on_mcp_servers_change"):
            return
        with contextlib.suppress(RuntimeError):
            task = asyncio.ensure_future(
                host.dispatch("mcp_servers_change", {"servers": self.status()}, self.ctx)
            )
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
