"""pi-permission-gate: ask the user before a dangerous ``bash`` tool call runs.

With a UI (interactive, RPC) the user answers a confirm dialog; without one (``-p``, JSON) the
call is refused, and the reason tells the model why, so it can pick another way.
"""

from __future__ import annotations

import re

from pi_host import hookimpl

__version__ = "0.1.0"

RULES: list[tuple[str, str]] = [
    (
        r"\brm\s+(-[a-zA-Z]*[rR][a-zA-Z]*[fF]|-[a-zA-Z]*[fF][a-zA-Z]*[rR]|-r\s+-f|-f\s+-r)\b",
        "recursive forced delete",
    ),
    (r"\bsudo\b", "runs as root"),
    (r"\bmkfs(\.\w+)?\b", "formats a file system"),
    (r"\bdd\b[^|;&]*\bof=", "raw write with dd"),
    (r"\bchmod\s+(-[a-zA-Z]*R[a-zA-Z]*\s+)?0?777\b", "world-writable permissions"),
    (r">\s*/dev/(sd|nvme|hd|vd|disk)\w*", "writes onto a block device"),
    (r"\b(curl|wget)\b[^|;&]*\|\s*(sudo\s+)?(ba|z|da)?sh\b", "pipes a download into a shell"),
    (r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}", "fork bomb"),
]


def danger(command: str) -> str | None:
    """Why ``command`` is dangerous, or None when no rule matches."""
    for pattern, why in RULES:
        if re.search(pattern, command):
            return why
    return None


@hookimpl
async def on_tool_call(event, ctx):
    if event["toolName"] != "bash":
        return None
    command = str(event["input"].get("command", ""))
    why = danger(command)
    if why is None:
        return None
    if ctx is None or not ctx.has_ui:
        return {
            "block": True,
            "reason": f"pi-permission-gate: blocked a dangerous command ({why}); "
            "no user is present to approve it, so it was not run",
        }
    if await ctx.ui.confirm("Allow a dangerous command?", f"{why}:\n\n  {command}"):
        return None
    return {"block": True, "reason": f"pi-permission-gate: the user declined this command ({why})"}
