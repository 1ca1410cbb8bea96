"""MCP servers built with the SDK for the tests: ``python servers.py stdio`` or ``python
servers.py http <port-file>`` (streamable HTTP on 127.0.0.1).

Tools ``echo``, ``big``, ``grow`` (adds ``fresh``, withdraws ``big``, announces the changed list)
and ``crash``; resources ``docs://readme`` (text), ``docs://logo.png`` (image), ``docs://data.bin``
(binary), an MCP Apps ``ui://`` page and the template ``notes://{name}``."""

from __future__ import annotations

import os
import socket
import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("pi-host-test", instructions="Test tools for pi-host")


@server.tool()
def echo(text: str) -> str:
    """Repeat the text back, reversed."""
    return text[::-1]


@server.tool()
def big(size: int) -> str:
    """Return a long text of about size bytes."""
    return "".join(f"line {i:06d}\n" for i in range(size // 12 + 1))


def fresh(text: str) -> str:
    """A tool that exists only after grow (a changed tool list)."""
    return f"fresh: {text}"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool fresh and withdraw big, then tell the client the tool list changed."""
    server.add_tool(fresh)
    server.remove_tool("big")
    await ctx.session.send_tool_list_changed()
    return "grown"


@server.tool()
def crash() -> str:
    """Stop the server process at once."""
    os._exit(3)


PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc000000301010018dd8db40000000049454e44ae426082"
)


@server.resource("docs://readme", name="readme", description="The project readme", mime_type="text/plain")
def readme() -> str:
    return "Read me: the answer is 42."


@server.resource("docs://logo.png", name="logo", mime_type="image/png")
def logo() -> bytes:
    return PNG


@server.resource("docs://data.bin", name="data", mime_type="application/octet-stream")
def data() -> bytes:
    return bytes(range(16))


@server.resource("ui://app/main", name="app", mime_type="text/html;profile=mcp-app")
def app() -> str:
    return "<html></html>"


@server.resource("notes://{name}", name="note", description="A note by name")
def note(name: str) -> str:
    return f"note {name}"


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run()
    else:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        with open(sys.argv[2] + ".tmp", "w") as handle:
            handle.write(str(port))
        os.replace(sys.argv[2] + ".tmp", sys.argv[2])
        server.run("streamable-http", host="127.0.0.1", port=port)
