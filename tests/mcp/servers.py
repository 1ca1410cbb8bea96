"""MCP servers built with the SDK for the tests: ``python servers.py stdio`` (tools ``echo``,
``big`` and ``crash``) or ``python servers.py http <port-file>`` (streamable HTTP on 127.0.0.1)."""

from __future__ import annotations

import os
import socket
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("pi-host-test", instructions="Test tools for pi-host")


@server.tool()
def echo(text: str) -> str:
    """Repeat the text back, reversed."""
    return text[::-1]


@server.tool()
def big(size: int) -> str:
    """Return a long text of about size bytes."""
    return "".join(f"line {i:06d}\n" for i in range(size // 12 + 1))


@server.tool()
def crash() -> str:
    """Stop the server process at once."""
    os._exit(3)


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
