"""``/mcp``: each server's state, tools and errors; ``/mcp restart [server]``; ``/mcp reconnect``."""

from __future__ import annotations

from typing import Any


def status_lines(manager: Any) -> list[str]:
    if manager is None:
        return ["No MCP servers configured (mcp.json), or MCP is off for this run (--no-mcp)."]
    lines = []
    for connection in manager.connections.values():
        config = connection.config
        count = len(connection.tools)
        state = connection.state
        head = f"{config.name}: {state}"
        if state == "connected":
            head += f", {count} tool{'s' if count != 1 else ''}"
        lines.append(f"{head} ({config.exposure}, {config.scope})")
        lines.append(f"  {config.transport}")
        if connection.tools:
            names = [t.name for t in connection.tools]
            marks = []
            for name in names:
                exposure = config.exposure_of(name)
                marks.append(name if exposure == config.exposure else f"{name} [{exposure}]")
            lines.append(f"  tools: {', '.join(marks)}")
        if connection.error and state != "connected":
            lines.append(f"  {connection.error}")
            lines += [f"  stderr: {line}" for line in connection.stderr_tail()[-5:]]
    for error in manager.errors:
        lines.append(f"config error: {error}")
    return lines or ["No MCP servers configured."]


def _say(ctx: Any, text: str, level: str = "info") -> None:
    if getattr(ctx, "has_ui", False):
        ctx.ui.notify(text, level)
    else:  # print / JSON runs: pi prints the status
        import sys

        (sys.stderr if level == "error" else sys.stdout).write(text + "\n")


async def run(args: str, ctx: Any, manager: Any) -> None:
    words = (args or "").split()
    if words and words[0] in ("restart", "reconnect"):
        if manager is None:
            _say(ctx, "No MCP servers to restart.", "warning")
            return
        name = words[1] if len(words) > 1 else None
        if name is not None and name not in manager.connections:
            _say(ctx, f'No MCP server named "{name}".', "error")
            return
        restarted = await manager.restart(name)
        states = ", ".join(f"{n}: {manager.connections[n].state}" for n in restarted)
        _say(ctx, f"Restarted MCP {states}")
        return
    if words and words[0] not in ("status", "list"):
        _say(ctx, "Usage: /mcp [status | restart [server]]", "error")
        return
    if manager is not None and not getattr(ctx, "has_ui", False):
        await manager.wait_all()  # a script asking for the status wants the outcome, not "connecting"
    _say(ctx, "\n".join(status_lines(manager)))
