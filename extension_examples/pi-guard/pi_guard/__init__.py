"""pi-guard: refuse shell commands that match a deny list.

Shows three extension points: an event hook that blocks (``on_tool_call``), a slash command
(``/guard``), and a CLI flag (``--guard-allow``) read back through ``ctx.get_flag``.
"""

from __future__ import annotations

import re

from pi_host import hookimpl
from pi_host.plugins.registrations import CliFlag, Command

__version__ = "0.1.0"

DENY = [r"\brm\s+-rf\s+/(\s|$)", r"\bmkfs\b", r":\(\)\s*\{", r"\bdd\s+if=.*\bof=/dev/"]
blocked: list[str] = []
"""Commands refused in this process, for /guard."""


@hookimpl
def register_cli_flags():
    return [CliFlag(name="guard-allow", type="boolean", description="Let pi-guard allow everything")]


@hookimpl
def on_tool_call(event, ctx):
    if event["toolName"] != "bash" or (ctx is not None and ctx.get_flag("guard-allow")):
        return None
    command = str(event["input"].get("command", ""))
    for pattern in DENY:
        if re.search(pattern, command):
            blocked.append(command)
            return {"block": True, "reason": f"pi-guard refused a dangerous command (matched {pattern!r})"}
    return None


def _guard_command(args, ctx):
    ctx.session.guard_report = list(blocked)
    print(f"pi-guard: {len(blocked)} command(s) blocked", flush=True)


@hookimpl
def register_commands():
    return [Command(name="guard", handler=_guard_command, description="Show what pi-guard blocked")]
