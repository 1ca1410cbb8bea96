"""Built-in MCP support (pi's ``builtin:mcp``): servers from ``<agent dir>/mcp.json`` and, for
trusted projects, ``.pi/mcp.json``; their tools as ``mcp__<server>__<tool>``; ``pi mcp
add/remove/list``; ``/mcp``; ``--no-mcp`` for one run. See docs/mcp.md.

Importing this module is cheap: the MCP SDK is imported only when a server is configured.
"""

from __future__ import annotations

import os
import weakref
from typing import Any

from pi_host import hookimpl
from pi_host.plugins.registrations import CliFlag, Command, ContextSource, Subcommand

_managers: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def manager_of(ctx: Any) -> Any:
    session = getattr(ctx, "session", None)
    return _managers.get(session) if session is not None else None


def _run_cli(argv: list[str]) -> int:
    from pi_mcp.cli import main

    return main(argv)


async def _slash_mcp(args: str, ctx: Any) -> None:
    from pi_mcp.command import run

    await run(args, ctx, manager_of(ctx))


@hookimpl
def register_subcommands():
    return [Subcommand("mcp", _run_cli, "Configure and check MCP servers (add, remove, list)")]


@hookimpl
def register_cli_flags():
    return [CliFlag(name="no-mcp", description="Do not connect MCP servers in this run")]


@hookimpl
def register_commands():
    # Built in, as pi's /mcp: RPC get_commands lists no built-in command.
    return [
        Command(
            name="mcp",
            handler=_slash_mcp,
            description="MCP servers: status, tools, restart",
            source="builtin",
        )
    ]


def _prompt_section(ctx: Any) -> dict[str, Any]:
    manager = manager_of(ctx)
    return manager.prompt_section() if manager is not None else {}


@hookimpl
def register_context_sources():
    # the mcp_servers section: servers whose tools the model finds only through tool_search
    return [ContextSource(name="mcp-servers", sections=_prompt_section)]


@hookimpl
def on_session_start(event, ctx):
    session = getattr(ctx, "session", None)
    if session is None or session in _managers or ctx.get_flag("no-mcp"):
        return
    agent_dir = getattr(ctx, "agent_dir", None) or os.environ.get("PI_CODING_AGENT_DIR")
    trusted = ctx.is_project_trusted()
    candidates = [os.path.join(agent_dir, "mcp.json")] if agent_dir else []
    if trusted:
        candidates.append(os.path.join(ctx.cwd, ".pi", "mcp.json"))
    if not any(os.path.isfile(p) for p in candidates):
        return  # the usual case: nothing below is imported
    from pi_mcp.config import load_servers

    servers, errors = load_servers(ctx.cwd, trusted, agent_dir)
    if not servers and not errors:
        return
    from pi_mcp.manager import McpManager

    manager = _managers[session] = McpManager(ctx, servers, errors)
    manager.start()


@hookimpl
async def on_before_agent_start(event, ctx):
    manager = manager_of(ctx)
    if manager is not None:
        await manager.wait_direct()


@hookimpl
async def on_session_shutdown(event, ctx):
    session = getattr(ctx, "session", None)
    manager = _managers.pop(session, None) if session is not None else None
    if manager is not None:
        await manager.close()
