"""Small helpers for building tool results and reading tool settings."""

from __future__ import annotations

import errno as errno_module
from typing import Any

from pi_host.loop.tools import ToolResult


def text_result(text: str, details: Any = None, **kwargs: Any) -> ToolResult:
    """A result with one text block."""
    return ToolResult.text(text, details=details, **kwargs)


def setting(settings: Any, dotted: str, default: Any = None) -> Any:
    """``settings["a"]["b"]`` for ``"a.b"``, or ``default`` when any part is missing."""
    node = settings
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def os_error_text(exc: BaseException) -> str:
    """A short description of a filesystem error with its code, e.g. ``no such file (ENOENT)``."""
    code = getattr(exc, "errno", None)
    reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    name = errno_module.errorcode.get(code) if isinstance(code, int) else None
    return f"{reason} ({name})" if name else reason


def agent_dir(ctx: Any = None) -> str:
    """The agent directory: ``ctx.agent_dir`` when the session set it, else the configured one."""
    value = getattr(ctx, "agent_dir", None)
    if value:
        return str(value)
    from pi_host.config import paths

    return paths.agent_dir()
