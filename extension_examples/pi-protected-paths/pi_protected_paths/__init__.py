"""pi-protected-paths: refuse ``write`` / ``edit`` calls (and simple shell redirections) whose
target is outside the project directory or a protected file (``.env*``, anything in ``.git/``).
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex

from pi_host import hookimpl

__version__ = "0.1.0"

PROTECTED_NAMES = [".env", ".env.*", "*.pem", "id_rsa", "id_ed25519"]
"""File names (globs) that are never written, wherever they are."""
PROTECTED_DIRS = [".git"]
"""Directory names whose contents are never written."""
HARMLESS_TARGETS = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"}

_REDIRECT = re.compile(r"(?<![<&0-9])(?:[0-9]?>>?|&>>?)\s*([^\s;&|<>()]+)")
_TEE = re.compile(r"\btee\s+((?:-[a-zA-Z]+\s+)*)([^\s;&|<>()]+)")


def _resolve(path: str, cwd: str) -> str:
    if path.startswith("@"):
        path = path[1:]
    path = os.path.expanduser(path)
    if not os.path.isabs(path):
        path = os.path.join(cwd, path)
    return os.path.realpath(path)


def why_protected(path: str, cwd: str) -> str | None:
    """Why writing ``path`` (as the model wrote it, relative to ``cwd``) is refused, or None."""
    target = _resolve(path, cwd)
    if target in HARMLESS_TARGETS:
        return None
    root = os.path.realpath(cwd)
    if os.path.commonpath([root, target]) != root:
        return f"{path} is outside the project directory {root}"
    parts = os.path.relpath(target, root).split(os.sep)
    for directory in parts[:-1]:
        if directory in PROTECTED_DIRS:
            return f"{path} is inside {directory}/"
    if parts[-1] in PROTECTED_DIRS:
        return f"{path} is {parts[-1]}/ itself"
    for pattern in PROTECTED_NAMES:
        if fnmatch.fnmatch(parts[-1], pattern):
            return f"{path} is a protected file ({pattern})"
    return None


def redirect_targets(command: str) -> list[str]:
    """The files a shell command writes by ``>``, ``>>``, ``&>`` or ``tee`` (simple forms only)."""
    targets = [m.group(1) for m in _REDIRECT.finditer(command)]
    targets += [m.group(2) for m in _TEE.finditer(command)]
    cleaned = []
    for target in targets:
        try:
            words = shlex.split(target)
        except ValueError:
            words = [target]
        cleaned.extend(words[:1])
    return cleaned


@hookimpl
def on_tool_call(event, ctx):
    cwd = ctx.cwd if ctx is not None else os.getcwd()
    name = event["toolName"]
    arguments = event["input"]
    if name in ("write", "edit"):
        paths = [str(arguments.get("path", ""))]
    elif name == "bash":
        paths = redirect_targets(str(arguments.get("command", "")))
    else:
        return None
    for path in paths:
        why = why_protected(path, cwd)
        if why is not None:
            return {"block": True, "reason": f"pi-protected-paths: refused {name}: {why}"}
    return None
