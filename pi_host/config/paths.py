"""Where things are: the agent dir (shared with pi on purpose), pi-host's cache, and the walk up
from a project directory that trust, context files and skills share."""

from __future__ import annotations

import os
from collections.abc import Iterator


def agent_dir() -> str:
    """``PI_CODING_AGENT_DIR`` or ``~/.pi/agent``."""
    value = os.environ.get("PI_CODING_AGENT_DIR")
    if value:
        return os.path.abspath(os.path.expanduser(value))
    return os.path.join(os.path.expanduser("~"), ".pi", "agent")


def cache_dir() -> str:
    """pi-host's own cache (never inside the agent dir, which pi also reads)."""
    value = os.environ.get("PI_HOST_CACHE_DIR")
    if value:
        return os.path.abspath(os.path.expanduser(value))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pi-host")


def walk_up(directory: str) -> Iterator[str]:
    """``directory`` (as given), then each parent up to the filesystem root."""
    while True:
        yield directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return
        directory = parent


def git_root(cwd: str) -> str | None:
    """The closest directory at or above ``cwd`` holding ``.git`` (a file or a directory)."""
    return next((d for d in walk_up(cwd) if os.path.exists(os.path.join(d, ".git"))), None)


def agents_skill_dirs(cwd: str) -> list[str]:
    """``.agents/skills`` candidates: cwd and each ancestor up to the git root (cwd only outside git)."""
    cwd = os.path.abspath(cwd)
    root = git_root(cwd) or cwd
    found: list[str] = []
    for directory in walk_up(cwd):
        found.append(os.path.join(directory, ".agents", "skills"))
        if directory == root:
            break
    return found


def absolute_path(path: str, base: str) -> str:
    """``path`` with ``~`` expanded, relative to ``base``, normalized."""
    path = os.path.expanduser(path)
    return os.path.normpath(path if os.path.isabs(path) else os.path.join(base, path))
