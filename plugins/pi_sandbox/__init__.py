"""pi-sandbox: an OS sandbox for the bash tool's commands on Linux (docs/sandbox.md).

``--sandbox read-only|workspace-write|off`` or ``{"sandbox": {"mode": ...}}`` in settings; off by
default. In ``workspace-write`` commands may write only beneath the project and the temp folders
(Landlock), protected paths inside the project stay read-only and nothing a command starts outlives
it (mount and PID namespaces), and the network is off or limited to TCP ports (a network
namespace, Landlock TCP rules). pi-host's own ``write``/``edit`` tools follow the same rules.
bubblewrap is used when Landlock is missing; elsewhere one line says the sandbox is not available.

This module stays thin: the work is imported when a session starts with the sandbox on.
"""

from __future__ import annotations

from typing import Any

from pi_host import hookimpl

__version__ = "0.1.0"


@hookimpl
def register_cli_flags() -> list[Any]:
    from pi_host import CliFlag

    return [
        CliFlag(
            name="sandbox",
            type="string",
            description="OS sandbox for tool commands: read-only, workspace-write or off (docs/sandbox.md)",
        )
    ]


@hookimpl
def register_context_sources() -> list[Any]:
    from pi_host import ContextSource

    def sections(ctx: Any) -> dict[str, str | None] | None:
        if not _loaded():
            return None
        from pi_sandbox.session import section

        return section(ctx)

    return [ContextSource(name="sandbox", sections=sections, order=900)]


@hookimpl
def on_session_start(event: dict[str, Any], ctx: Any) -> None:
    if not _wanted(ctx):
        return
    from pi_sandbox.session import setup

    setup(ctx)


@hookimpl
def on_session_shutdown(event: dict[str, Any], ctx: Any) -> None:
    if _loaded():
        from pi_sandbox.session import shutdown

        shutdown(ctx)


@hookimpl
def on_tool_call(event: dict[str, Any], ctx: Any) -> dict[str, Any] | None:
    if not _loaded():
        return None  # the sandbox was never turned on in this process
    from pi_sandbox.session import current, tool_capability

    box = current(ctx)
    if box is None or tool_capability(ctx, event["toolName"]) != "write":
        return None
    why = box.check_write(event["toolName"], event["input"], ctx.cwd)
    return {"block": True, "reason": why} if why else None


def _loaded() -> bool:
    import sys

    return "pi_sandbox.session" in sys.modules


def _wanted(ctx: Any) -> bool:
    """Cheap test first: a flag, or a ``sandbox`` key in the settings (the merged ones say whether
    either file has one); the full policy reads the files apart."""
    if ctx.get_flag("sandbox") is not None or _loaded():
        return True
    settings = ctx.settings if isinstance(ctx.settings, dict) else {}
    return isinstance(settings.get("sandbox"), dict)
