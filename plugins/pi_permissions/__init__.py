"""pi-permissions: permission modes and rules for tool calls (docs/permissions.md).

Modes: ``default`` (ask before any tool that is not read-only, unless a rule allows it),
``accept-edits`` (file edits inside the project run, the rest is asked), ``plan`` (a hard gate:
only tools that declare ``capability = "read"`` run, whatever their name) and ``auto`` (every
tool runs: pi's behaviour, and the default). Chosen with ``--permission-mode``, the setting
``permissions.defaultMode``, ``/permissions <mode>`` or Alt+M in the interactive mode. Rules
``permissions.allow`` / ``ask`` / ``deny`` in the user's and a trusted project's settings.
Questions go through ``ctx.ui`` (the terminal's dialog, an RPC client); without a UI a call that
needs one is refused with one line saying why.

Its ``tool_call`` handler runs last (``trylast``): other plugins block first, then the user is
asked about what is left.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from pi_host import hookimpl

__version__ = "0.1.0"


@hookimpl
def register_cli_flags() -> list[Any]:
    from pi_host import CliFlag

    return [
        CliFlag(
            name="permission-mode",
            type="string",
            description="Tool permissions: default, accept-edits, plan or auto (docs/permissions.md)",
        )
    ]


@hookimpl
def register_commands() -> list[Any]:
    from pi_host import Command, Shortcut

    async def permissions(args: str, ctx: Any) -> None:
        from pi_permissions.session import command

        await command(args, ctx)

    def cycle(ctx: Any) -> None:
        from pi_permissions.session import cycle

        cycle(ctx)

    def complete(prefix: str) -> list[str]:
        from pi_permissions.gate import MODES

        return [mode for mode in MODES if mode.startswith(prefix)]

    return [
        Command(
            "permissions",
            permissions,
            "Show the permission mode and rules; /permissions <mode> switches",
            complete=complete,
            source="builtin",  # pi-host's own, like /mcp: RPC get_commands lists no built-in command
        ),
        Shortcut("alt+m", cycle, "Cycle the permission mode (default, accept-edits, plan, auto)"),
    ]


@hookimpl
def register_context_sources() -> list[Any]:
    from pi_host import ContextSource

    def sections(ctx: Any) -> dict[str, str | None] | None:
        if "pi_permissions.session" not in sys.modules:
            return None
        from pi_permissions.session import section

        return section(ctx)

    return [ContextSource(name="permissions", sections=sections, order=900)]


@hookimpl
def on_session_start(event: dict[str, Any], ctx: Any) -> None:
    if not _wanted(ctx):
        return  # today's behaviour and nothing configured: nothing to load (/permissions, Alt+M load it)
    from pi_permissions.session import setup

    setup(ctx)


@hookimpl(trylast=True)
async def on_tool_call(event: dict[str, Any], ctx: Any) -> dict[str, Any] | None:
    if "pi_permissions.session" not in sys.modules:
        return None
    from pi_permissions.session import check

    return await check(event, ctx)


def _wanted(ctx: Any) -> bool:
    if ctx.get_flag("permission-mode") is not None or "pi_permissions.session" in sys.modules:
        return True
    settings = ctx.settings if isinstance(ctx.settings, dict) else {}
    if (
        isinstance(settings.get("permissions"), dict)
        or settings.get("agentHooks")
        or ctx.get_flag("agent-hooks")
    ):
        return True  # rules, a default mode, or hooks whose permissionDecision we apply
    return os.path.exists(os.path.join(ctx.agent_dir, "permissions.json"))
