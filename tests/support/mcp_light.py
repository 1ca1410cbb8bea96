"""The test MCP server of ``mcp_servers.py`` without the SDK: ``python mcp_light.py``, stdio only.

Importing the MCP SDK's server costs about 1.2 s of CPU, paid by every test that starts one; this
server answers the same requests with the same JSON (recorded from the SDK server: the tool list
with its input and output schemas, ``structuredContent``, the error texts, base64 blobs, the
``Unknown resource`` error) in a few milliseconds. The SDK server stays in use where the SDK itself
is what a test is about (the streamable HTTP transport, one stdio round trip in
``tests/e2e/mcp/test_runs.py``).
"""

from __future__ import annotations

import base64
import json
import os
import sys
from collections.abc import Callable
from typing import Any

INSTRUCTIONS = "Test tools for pi-host"
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc000000301010018dd8db40000000049454e44ae426082"
)


def _schema(tool: str, params: dict[str, str]) -> dict[str, Any]:
    """The input schema the SDK derives from a function's signature (pydantic's JSON schema)."""
    props = {name: {"title": name.title(), "type": kind} for name, kind in params.items()}
    schema: dict[str, Any] = {"properties": props}
    if params:
        schema["required"] = list(params)
    return {**schema, "type": "object", "title": f"{tool}Arguments"}


def _tool(name: str, description: str, params: dict[str, str]) -> dict[str, Any]:
    return {
        "description": description,
        "inputSchema": _schema(name, params),
        "name": name,
        "outputSchema": {
            "properties": {"result": {"title": "Result", "type": "string"}},
            "required": ["result"],
            "type": "object",
            "title": f"{name}Output",
        },
    }


TOOLS = {
    "echo": _tool("echo", "Repeat the text back, reversed.", {"text": "string"}),
    "big": _tool("big", "Return a long text of about size bytes.", {"size": "integer"}),
    "grow": _tool(
        "grow", "Add the tool fresh and withdraw big, then tell the client the tool list changed.", {}
    ),
    "crash": _tool("crash", "Stop the server process at once.", {}),
}
FRESH = _tool("fresh", "A tool that exists only after grow (a changed tool list).", {"text": "string"})

RESOURCES = [
    {"description": "The project readme", "mimeType": "text/plain", "name": "readme", "uri": "docs://readme"},
    {"description": "", "mimeType": "image/png", "name": "logo", "uri": "docs://logo.png"},
    {"description": "", "mimeType": "application/octet-stream", "name": "data", "uri": "docs://data.bin"},
    {"description": "", "mimeType": "text/html;profile=mcp-app", "name": "app", "uri": "ui://app/main"},
]
TEMPLATES = [
    {
        "description": "A note by name",
        "mimeType": "text/plain",
        "name": "note",
        "uriTemplate": "notes://{name}",
    }
]
CONTENTS: dict[str, str | bytes] = {
    "docs://readme": "Read me: the answer is 42.",
    "docs://logo.png": PNG,
    "docs://data.bin": bytes(range(16)),
    "ui://app/main": "<html></html>",
}


def _write(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def _text_result(text: str) -> dict[str, Any]:
    return {
        "content": [{"text": text, "type": "text"}],
        "isError": False,
        "structuredContent": {"result": text},
    }


def _error_result(text: str) -> dict[str, Any]:
    return {"content": [{"text": text, "type": "text"}], "isError": True}


def call_tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    tool = TOOLS.get(name)
    if tool is None:
        return _error_result(f"Unknown tool: {name}")
    missing = [key for key in tool["inputSchema"].get("required", []) if key not in arguments]
    if missing:
        return _error_result(f"Error executing tool {name}: missing arguments {missing}")
    if name == "echo":
        return _text_result(str(arguments["text"])[::-1])
    if name == "big":
        size = int(arguments["size"])
        return _text_result("".join(f"line {i:06d}\n" for i in range(size // 12 + 1)))
    if name == "fresh":
        return _text_result(f"fresh: {arguments['text']}")
    if name == "grow":
        TOOLS["fresh"] = FRESH
        TOOLS.pop("big", None)
        _write({"method": "notifications/tools/list_changed"})
        return _text_result("grown")
    os._exit(3)  # crash


def read_resource(uri: str) -> dict[str, Any]:
    listed = {item["uri"]: item["mimeType"] for item in RESOURCES}
    if uri in CONTENTS:
        body, mime = CONTENTS[uri], listed[uri]
    elif uri.startswith("notes://"):
        body, mime = f"note {uri.removeprefix('notes://')}", "text/plain"
    else:
        raise LookupError(uri)
    if isinstance(body, bytes):
        return {"contents": [{"blob": base64.b64encode(body).decode(), "mimeType": mime, "uri": uri}]}
    return {"contents": [{"mimeType": mime, "text": body, "uri": uri}]}


def _initialize(params: dict[str, Any]) -> dict[str, Any]:
    return {
        "capabilities": {
            "prompts": {"listChanged": False},
            "resources": {"listChanged": False, "subscribe": False},
            "tools": {"listChanged": False},
        },
        "instructions": INSTRUCTIONS,
        "protocolVersion": params.get("protocolVersion", "2025-06-18"),
        "serverInfo": {"name": "pi-host-test", "version": ""},
    }


HANDLERS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "initialize": _initialize,
    "ping": lambda _params: {},
    "tools/list": lambda _params: {"tools": list(TOOLS.values())},
    "tools/call": lambda params: call_tool(params["name"], params.get("arguments") or {}),
    "resources/list": lambda _params: {"resources": RESOURCES},
    "resources/templates/list": lambda _params: {"resourceTemplates": TEMPLATES},
    "resources/read": lambda params: read_resource(params["uri"]),
    "prompts/list": lambda _params: {"prompts": []},
}


def serve() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        if method is None or ident is None:  # a notification, or an answer to a request of ours
            continue
        handler = HANDLERS.get(method)
        if handler is None:
            _write({"id": ident, "error": {"code": -32601, "message": "Method not found"}})
            continue
        try:
            _write({"id": ident, "result": handler(message.get("params") or {})})
        except LookupError as exc:
            error = {
                "code": -32602,
                "message": f"Unknown resource: {exc.args[0]}",
                "data": {"uri": exc.args[0]},
            }
            _write({"id": ident, "error": error})


if __name__ == "__main__":
    serve()
