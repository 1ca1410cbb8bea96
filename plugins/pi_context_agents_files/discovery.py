"""Finding AGENTS.md / CLAUDE.md context files (reference §8.3).

Per directory at most one file, the first that exists of :data:`CANDIDATES`. Order: the agent
dir first, then every directory from the filesystem root down to the working directory; a path
met twice loads once. Inside a linked git worktree nested in its main repository, the main
repository's file is skipped when the worktree has its own copy at the same place (it is the same
file on another branch).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from pi_host.lib.resources import walk_up

CANDIDATES = ("AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")


@dataclass
class ContextFile:
    """One context file (``AGENTS.md``, ``CLAUDE.md``) found for the prompt, and its text."""

    path: str
    content: str


def _is_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _file_identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def context_file_in(directory: str) -> str | None:
    for name in CANDIDATES:
        path = os.path.join(directory, name)
        if _is_file(path):
            return path
    return None


def ancestors(cwd: str) -> list[str]:
    """Every directory from the filesystem root down to ``cwd``."""
    chain = list(walk_up(os.path.abspath(cwd)))
    chain.reverse()
    return chain


def _worktree_shadowed(cwd: str) -> set[str]:
    """Main-repository directories whose context file a nested linked worktree shadows."""
    for directory in reversed(ancestors(cwd)):
        dot_git = os.path.join(directory, ".git")
        if os.path.isdir(dot_git):
            return set()  # a main checkout: nothing shadows anything
        if not _is_file(dot_git):
            continue
        try:
            with open(dot_git, encoding="utf-8") as handle:
                line = handle.readline().strip()
        except OSError:
            return set()
        if not line.startswith("gitdir:"):
            return set()
        gitdir = os.path.normpath(os.path.join(directory, line[len("gitdir:") :].strip()))
        # <main>/.git/worktrees/<name> -> <main>
        parts = gitdir.split(os.sep)
        if len(parts) < 3 or parts[-2] != "worktrees" or parts[-3] != ".git":
            return set()
        main = os.sep.join(parts[:-3]) or os.sep
        if not (directory + os.sep).startswith(main.rstrip(os.sep) + os.sep):
            return set()  # the worktree lives outside its main repository
        shadowed = set()
        for above in ancestors(directory):
            if above == directory or not (above + os.sep).startswith(main.rstrip(os.sep) + os.sep):
                continue  # only the main repository root and directories between it and the worktree
            rel = os.path.relpath(above, main)
            if context_file_in(os.path.normpath(os.path.join(directory, rel))):
                shadowed.add(above)
        return shadowed
    return set()


def discover(agent_dir: str, cwd: str) -> list[ContextFile]:
    directories = [agent_dir, *ancestors(cwd)]
    shadowed = _worktree_shadowed(cwd)
    seen: set[tuple[int, int] | None] = set()
    found: list[ContextFile] = []
    for directory in directories:
        if directory in shadowed:
            continue
        path = context_file_in(directory)
        if path is None:
            continue
        key = _file_identity(path)  # the same file reached twice (symlinks, agent dir in the tree)
        if key in seen:
            continue
        seen.add(key)
        try:
            with open(path, encoding="utf-8-sig", errors="replace") as handle:
                content = handle.read()
        except OSError:
            continue
        found.append(ContextFile(path=os.path.abspath(path), content=content))
    return found


def render(files: list[ContextFile]) -> str | None:
    """The ``project_context`` section body, or None without files."""
    if not files:
        return None
    blocks = [
        "The files below hold instructions from the user and the project. Follow them; where they "
        "disagree, the later (more specific) file wins."
    ]
    for file in files:
        blocks.append(
            f'<project_instructions path="{file.path}">\n{file.content.strip()}\n</project_instructions>'
        )
    return "\n\n".join(blocks)
