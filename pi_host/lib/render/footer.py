"""What the footer shows (:class:`FooterInfo`), the git branch read without a subprocess, and
the number formats of pi's footer."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

__all__ = ["FooterInfo", "format_cost", "format_tokens", "git_branch", "home_relative"]


@dataclass
class FooterInfo:
    cwd: str = ""
    git_branch: str | None = None
    session_name: str | None = None
    provider: str | None = None
    model: str | None = None
    thinking_level: str | None = None
    reasoning: bool = False
    """The model can think (the thinking level is shown only then)."""
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0
    context_tokens: int | None = None
    """Tokens of the context the next request sends (None: unknown)."""
    context_window: int | None = None
    statuses: dict[str, str] = field(default_factory=dict)
    """Plugin statuses (``ctx.ui.set_status``) by key, shown in key order."""


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(4096).strip()
    except OSError:
        return None


def _git_dir(cwd: str) -> str | None:
    """The git directory of the repository holding ``cwd`` (a worktree's ``.git`` file followed)."""
    current = os.path.abspath(cwd or os.getcwd())
    while True:
        candidate = os.path.join(current, ".git")
        if os.path.isdir(candidate):
            return candidate
        if os.path.isfile(candidate):
            text = _read(candidate) or ""
            if text.startswith("gitdir:"):
                target = text[len("gitdir:") :].strip()
                return os.path.normpath(os.path.join(current, target))
            return None
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def git_branch(cwd: str) -> str | None:
    """The checked-out branch of the repository at or above ``cwd`` from ``.git/HEAD``; a short
    commit id when the HEAD is detached; None outside a repository."""
    git_dir = _git_dir(cwd)
    if git_dir is None:
        return None
    head = _read(os.path.join(git_dir, "HEAD"))
    if not head:
        return None
    if head.startswith("ref:"):
        ref = head[len("ref:") :].strip()
        return ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else ref
    return head[:7] if all(c in "0123456789abcdef" for c in head.lower()) else None


def home_relative(path: str) -> str:
    """``path`` with the home directory written ``~``."""
    home = os.path.expanduser("~")
    if home and home != "/" and (path == home or path.startswith(home.rstrip(os.sep) + os.sep)):
        return "~" + path[len(home) :]
    return path


def format_tokens(count: int | float) -> str:
    """``999``, ``1.2k``, ``45k``, ``1.5M`` (pi's token counts)."""
    count = int(count or 0)
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{count / 1000:.1f}k"
    if count < 1_000_000:
        return f"{round(count / 1000)}k"
    if count < 10_000_000:
        return f"{count / 1_000_000:.1f}M"
    return f"{round(count / 1_000_000)}M"


def format_cost(cost: float) -> str:
    return f"${cost:.3f}"
