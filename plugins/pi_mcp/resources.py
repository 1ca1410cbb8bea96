"""The resource tools, added when a connected server offers resources (as pi, Codex and OpenCode):

* ``list_mcp_resources`` - ``{server?, resources: [{server, uri, name, ...}], nextCursor?}`` as
  JSON; with ``server`` one page (``cursor`` continues), without it every resource of every server;
* ``list_mcp_resource_templates`` - the same for URI templates (``resourceTemplates``);
* ``read_mcp_resource`` - one resource by ``server`` and ``uri``: text as text, images as images,
  other binary contents saved to a temporary file whose path the model gets.

MCP Apps resources (``ui://`` URIs, ``text/html;profile=mcp-app``) and icons are left out: pi-host
does not render them. The tools are read-only.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from typing import Any

from pi_host.loop.tools import Tool, ToolResult

NAMES = ("list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource")
APP_MIME = "text/html;profile=mcp-app"
READ_ONLY = {"readOnlyHint": True}


def _plain(item: Any) -> dict[str, Any]:
    data = (
        item.model_dump(by_alias=True, exclude_none=True, mode="json")
        if hasattr(item, "model_dump")
        else dict(item)
    )
    data.pop("icons", None)
    return data


def _is_app(data: dict[str, Any]) -> bool:
    uri = str(data.get("uri") or data.get("uriTemplate") or "")
    return uri.startswith("ui://") or str(data.get("mimeType") or "").replace(" ", "") == APP_MIME


class _ResourceTool(Tool):
    execution_mode = None
    annotations = READ_ONLY
    capability = "read"

    def __init__(self, manager: Any) -> None:
        self.manager = manager

    async def _servers(self, name: str | None) -> list[Any]:
        await self.manager.wait_all()
        servers = self.manager.resource_connections()
        if name is None:
            return servers
        chosen = [c for c in servers if c.config.name == name]
        if not chosen:
            known = ", ".join(c.config.name for c in servers) or "none"
            raise ValueError(
                f'No connected MCP server "{name}" offers resources (servers with resources: {known})'
            )
        return chosen


class _Lister(_ResourceTool):
    method = ""
    key = ""
    parameters = {
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": "Only this server (one page of its list)"},
            "cursor": {"type": "string", "description": "Continue a server's list from this cursor"},
        },
    }

    async def _page(self, connection: Any, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
        page = await connection.request(self.method, cursor)
        items = [_plain(item) for item in getattr(page, self.key_attr, None) or []]
        rows = [{"server": connection.config.name, **item} for item in items if not _is_app(item)]
        return rows, getattr(page, "next_cursor", None)

    async def execute(self, tool_call_id, args, signal, on_update, ctx):  # noqa: ANN001
        server = args.get("server") or None
        output: dict[str, Any] = {}
        if server is not None:
            (connection,) = await self._servers(server)
            rows, cursor = await self._page(connection, args.get("cursor") or None)
            output = {"server": server, self.key: rows}
            if cursor:
                output["nextCursor"] = cursor
        else:
            rows = []
            for connection in await self._servers(None):
                cursor = None
                while True:
                    page_rows, cursor = await self._page(connection, cursor)
                    rows.extend(page_rows)
                    if not cursor:
                        break
            output = {self.key: rows}
        return ToolResult.text(json.dumps(output, indent=2), details=output)


class ListResources(_Lister):
    name = label = "list_mcp_resources"
    description = "List the resources MCP servers offer (JSON: server, uri, name, mimeType...)."
    method, key, key_attr = "list_resources", "resources", "resources"


class ListResourceTemplates(_Lister):
    name = label = "list_mcp_resource_templates"
    description = "List the URI templates of resources MCP servers can read but do not list."
    method, key, key_attr = "list_resource_templates", "resourceTemplates", "resource_templates"


class ReadResource(_ResourceTool):
    name = label = "read_mcp_resource"
    description = "Read one resource of an MCP server by its URI."
    parameters = {
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": "The MCP server that offers the resource"},
            "uri": {"type": "string", "description": "The resource's URI"},
        },
        "required": ["server", "uri"],
    }

    async def execute(self, tool_call_id, args, signal, on_update, ctx):  # noqa: ANN001
        server, uri = str(args.get("server") or ""), str(args.get("uri") or "")
        (connection,) = await self._servers(server)
        result = await connection.request("read_resource", uri)
        content: list[dict[str, Any]] = []
        saved: list[str] = []
        for item in getattr(result, "contents", None) or []:
            data = _plain(item)
            mime = str(data.get("mimeType") or "")
            if "text" in data:
                content.append({"type": "text", "text": data["text"]})
            elif mime.startswith("image/"):
                content.append({"type": "image", "data": data.get("blob", ""), "mimeType": mime})
            else:
                path = _save_blob(data.get("blob", ""), data.get("uri") or uri)
                saved.append(path)
                content.append({"type": "text", "text": f"[{mime or 'binary'} resource saved to {path}]"})
        if not content:
            content.append({"type": "text", "text": f"(resource {uri} has no contents)"})
        details: dict[str, Any] = {"server": server, "uri": uri}
        if saved:
            details["savedPaths"] = saved
        return ToolResult(content=content, details=details)


def _save_blob(blob: str, uri: str) -> str:
    suffix = os.path.splitext(str(uri).rsplit("/", 1)[-1])[1][:16]
    fd, path = tempfile.mkstemp(prefix="pi-mcp-resource-", suffix=suffix)
    with os.fdopen(fd, "wb") as handle:
        handle.write(base64.b64decode(blob or b""))
    return path


def resource_tools(manager: Any) -> list[Tool]:
    return [ListResources(manager), ListResourceTemplates(manager), ReadResource(manager)]
