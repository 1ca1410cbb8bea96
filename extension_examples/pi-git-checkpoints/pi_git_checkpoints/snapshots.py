"""Snapshots of a git work tree that never touch the user's branch, index or stash list.

A snapshot is the work tree as ``git add -A`` would stage it (tracked changes, deletions and
untracked files; ignored files are left out), written through a *temporary* index file
(``GIT_INDEX_FILE``) into a tree object, wrapped in a commit (parent: ``HEAD``) and kept alive by a
private ref, ``refs/pi-checkpoints/<session>/<n>``. Restoring reads the target tree into another
temporary index and writes only the files that differ; files the snapshot does not have are
removed (ignored files are never touched).

Every git command goes through ``ctx.exec`` (no shell). ``ctx.exec`` takes no environment, so the
commands that need ``GIT_INDEX_FILE`` are run as ``env GIT_INDEX_FILE=... git ...``.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from typing import Any

REF_ROOT = "refs/pi-checkpoints"
IDENTITY = ["-c", "user.name=pi-git-checkpoints", "-c", "user.email=pi-git-checkpoints@localhost"]
TIMEOUT = 120
BATCH = 200
"""Paths per ``git checkout-index`` call (the command line has a length limit)."""


class GitError(RuntimeError):
    pass


@dataclass
class Repo:
    top: str
    """The work tree's root: every command runs there."""
    index: str
    """The user's index file (copied, never written, so ``git add`` reuses its stat cache)."""


async def git(ctx: Any, repo_or_cwd: Repo | str, *args: str, index: str | None = None) -> str:
    """Run git in the work tree; its stdout, or GitError with git's message."""
    cwd = repo_or_cwd.top if isinstance(repo_or_cwd, Repo) else repo_or_cwd
    if index is None:
        out = await ctx.exec("git", list(args), timeout=TIMEOUT, cwd=cwd)
    else:
        out = await ctx.exec("env", [f"GIT_INDEX_FILE={index}", "git", *args], timeout=TIMEOUT, cwd=cwd)
    if out["code"] != 0:
        lines = (out["stderr"] or out["stdout"]).strip().splitlines()
        command = next((a for a in args if not a.startswith("-") and "=" not in a), "")
        raise GitError(f"git {command}: {lines[-1] if lines else 'exit code ' + str(out['code'])}")
    return out["stdout"]


async def find_repo(ctx: Any) -> Repo | str:
    """The work tree ``ctx.cwd`` is in, or why there is none (a sentence)."""
    out = await ctx.exec(
        "git", ["rev-parse", "--show-toplevel", "--git-path", "index"], timeout=TIMEOUT, cwd=ctx.cwd
    )
    if out["code"] == 127:
        return "git is not installed"
    lines = out["stdout"].splitlines()
    if out["code"] != 0 or len(lines) < 2 or not lines[0]:
        return f"{ctx.cwd} is not in a git work tree"
    top = lines[0]
    return Repo(top=top, index=os.path.join(ctx.cwd, lines[1]))


def ref_name(session_id: str, number: int) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", session_id or "session").strip(".") or "session"
    return f"{REF_ROOT}/{safe}/{number}"


async def head_commit(ctx: Any, repo: Repo) -> str | None:
    out = await ctx.exec(
        "git", ["rev-parse", "--verify", "-q", "HEAD^{commit}"], timeout=TIMEOUT, cwd=repo.top
    )
    return out["stdout"].strip() or None if out["code"] == 0 else None


async def work_tree(ctx: Any, repo: Repo) -> tuple[str, str | None]:
    """``(tree, head)``: the work tree as a tree object (untracked files included) and HEAD."""
    head = await head_commit(ctx, repo)
    scratch = tempfile.mkdtemp(prefix="pi-checkpoint-")
    index = os.path.join(scratch, "index")
    try:
        copied = False
        if os.path.isfile(repo.index):
            # copy2 keeps the file's time: git re-reads the files changed since the index was
            # written by comparing their times with it ("racy git"), so a copy must not be newer
            shutil.copy2(repo.index, index)
            copied = True
        try:
            if not copied:
                await git(ctx, repo, "read-tree", *([head] if head else ["--empty"]), index=index)
            await git(ctx, repo, "add", "-A", index=index)
        except GitError:
            if not copied:
                raise
            # a copy git cannot use (a split index...): start from HEAD instead
            os.remove(index)
            await git(ctx, repo, "read-tree", *([head] if head else ["--empty"]), index=index)
            await git(ctx, repo, "add", "-A", index=index)
        tree = (await git(ctx, repo, "write-tree", index=index)).strip()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return tree, head


async def save(ctx: Any, repo: Repo, tree: str, head: str | None, ref: str, message: str) -> str:
    """A commit of ``tree`` (parent HEAD) under ``ref``; its id."""
    parents = ["-p", head] if head else []
    commit = (
        await git(ctx, repo, *IDENTITY, "commit-tree", "--no-gpg-sign", tree, *parents, "-m", message)
    ).strip()
    await git(ctx, repo, "update-ref", ref, commit)
    return commit


async def used_numbers(ctx: Any, repo: Repo, session_id: str) -> list[int]:
    prefix = ref_name(session_id, 0).rpartition("/")[0] + "/"
    out = await git(ctx, repo, "for-each-ref", "--format=%(refname)", prefix)
    return [int(name.rpartition("/")[2]) for name in out.split() if name.rpartition("/")[2].isdigit()]


async def object_exists(ctx: Any, repo: Repo, name: str) -> bool:
    out = await ctx.exec("git", ["cat-file", "-e", f"{name}^{{tree}}"], timeout=TIMEOUT, cwd=repo.top)
    return out["code"] == 0


async def restore(ctx: Any, repo: Repo, current: str, target: str) -> tuple[int, list[str]]:
    """Make the work tree match tree ``target`` (it matches tree ``current`` now). Returns the
    number of paths written or removed, and the paths left alone: files the target has that exist
    on disk but are not in ``current`` are ignored files (``current`` holds every other file), so
    no snapshot has them and they are not overwritten. The user's index, HEAD and stash are not
    touched."""
    out = await git(ctx, repo, "diff-tree", "-r", "-z", "--no-renames", "--name-status", current, target)
    fields = out.split("\0")
    removed: list[str] = []
    written: list[str] = []
    kept: list[str] = []
    for status, path in zip(fields[0::2], fields[1::2], strict=False):
        full = os.path.join(repo.top, path)
        if status == "D":
            removed.append(path)
        elif status == "A" and os.path.lexists(full) and not os.path.isdir(full):
            kept.append(path)
        elif status:
            written.append(path)
    for path in removed:
        full = os.path.join(repo.top, path)
        if os.path.islink(full) or os.path.isfile(full):
            os.remove(full)
        _prune_empty_parents(repo.top, os.path.dirname(full))
    if written:
        scratch = tempfile.mkdtemp(prefix="pi-checkpoint-")
        index = os.path.join(scratch, "index")
        try:
            await git(ctx, repo, "read-tree", target, index=index)
            for path in written:
                full = os.path.join(repo.top, path)
                if os.path.isdir(full) and not os.path.islink(full):
                    shutil.rmtree(full)  # a directory now, a file in the snapshot
            for start in range(0, len(written), BATCH):
                batch = written[start : start + BATCH]
                await git(ctx, repo, "checkout-index", "-f", "--", *batch, index=index)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return len(removed) + len(written), kept


def _prune_empty_parents(top: str, directory: str) -> None:
    top = os.path.abspath(top)
    directory = os.path.abspath(directory)
    while directory.startswith(top + os.sep):
        try:
            os.rmdir(directory)
        except OSError:
            return
        directory = os.path.dirname(directory)
