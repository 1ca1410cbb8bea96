"""Checkpoints of one session: taking them at turn starts, listing them, restoring one."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any

from . import snapshots
from .snapshots import GitError, Repo

ENTRY_TYPE = "git-checkpoint"
SETTING = "gitCheckpoints"
"""``settings.json``: ``{"gitCheckpoints": {"restoreOnTree": "ask" | "always" | "never"}}``."""


@dataclass
class State:
    repo: Repo | str | None = None
    """The work tree, the sentence saying why there is none, or None before the first look."""
    pending: dict[str, Any] | None = None
    """A snapshot taken at a turn start, recorded once the turn's user message is stored."""
    tree_target: str | None = None
    """The entry ``/tree`` selected (from ``session_before_tree``)."""
    told: set[str] = field(default_factory=set)
    next_number: int | None = None


_states: dict[int, State] = {}


def state(ctx: Any) -> State:
    return _states.setdefault(id(ctx.session), State())


def forget(ctx: Any) -> None:
    _states.pop(id(ctx.session), None)


def say(ctx: Any, text: str, kind: str = "info") -> None:
    """A notice: in the transcript with a UI, else one line on stderr (stdout is the answer)."""
    if ctx.has_ui:
        ctx.ui.notify(text, kind)
    else:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


def reply(ctx: Any, text: str, kind: str = "info") -> None:
    """The answer of ``/rewind``: in the transcript with a UI, else on stdout (like pi -p)."""
    if ctx.has_ui:
        ctx.ui.notify(text, kind)
    else:
        print(text, flush=True)


def say_once(ctx: Any, key: str, text: str, kind: str = "warning") -> None:
    told = state(ctx).told
    if key not in told:
        told.add(key)
        say(ctx, text, kind)


async def repo(ctx: Any) -> Repo | None:
    """The session's work tree; outside one, None (and the user is told, once)."""
    current = state(ctx)
    if current.repo is None:
        current.repo = await snapshots.find_repo(ctx)
    if isinstance(current.repo, str):
        say_once(ctx, "no-repo", f"pi-git-checkpoints: {current.repo}; no checkpoints are taken")
        return None
    return current.repo


# --- entries ------------------------------------------------------------------------------------


def checkpoints(ctx: Any) -> list[dict[str, Any]]:
    """Every checkpoint of the session (all branches), oldest first, with its entry ``id``."""
    found: dict[int, dict[str, Any]] = {}
    for entry in ctx.get_entries():
        data = entry.get("data")
        if entry["type"] == "custom" and entry.get("customType") == ENTRY_TYPE and isinstance(data, dict):
            if isinstance(data.get("n"), int) and data["n"] not in found:
                found[data["n"]] = {**data, "id": entry["id"]}
    return list(found.values())


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") for b in content or () if isinstance(b, dict))


def last_user_message(ctx: Any) -> tuple[str | None, str]:
    """The id and text of the last user message on the branch."""
    for entry in reversed(ctx.get_branch()):
        message = entry.get("message") if entry["type"] == "message" else None
        if isinstance(message, dict) and message.get("role") == "user":
            return entry["id"], _text(message)
    return None, ""


def _short(text: str, width: int = 50) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def label(point: dict[str, Any]) -> str:
    when = time.strftime("%H:%M:%S", time.localtime(point.get("timestamp", 0) / 1000))
    if point.get("kind") == "before-restore":
        what = f"your files before restoring #{point.get('restored')}"
    elif point.get("turn", 0) == 0:
        what = f"before “{_short(point.get('prompt') or '')}”"
    else:
        what = f"during “{_short(point.get('prompt') or '')}” (turn {point['turn'] + 1})"
    return f"#{point['n']}  {when}  {what}"


def listing(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Newest first; of a run of checkpoints with the same files only the newest is shown."""
    shown: list[dict[str, Any]] = []
    for point in reversed(points):
        if shown and shown[-1].get("tree") == point.get("tree"):
            continue
        shown.append(point)
    return shown


# --- taking them --------------------------------------------------------------------------------


async def _number(ctx: Any, where: Repo) -> int:
    current = state(ctx)
    if current.next_number is None:
        used = await snapshots.used_numbers(ctx, where, ctx.session.session_id)
        used += [p["n"] for p in checkpoints(ctx)]
        current.next_number = max(used, default=0) + 1
    number = current.next_number
    current.next_number += 1
    return number


async def record(ctx: Any, where: Repo, tree: str, head: str | None, **fields: Any) -> dict[str, Any]:
    """Commit ``tree`` under a new private ref and store the checkpoint entry; its data."""
    number = await _number(ctx, where)
    ref = snapshots.ref_name(ctx.session.session_id, number)
    user_id, prompt = last_user_message(ctx)
    commit = await snapshots.save(ctx, where, tree, head, ref, f"pi checkpoint #{number}")
    data = {
        "n": number,
        "ref": ref,
        "commit": commit,
        "tree": tree,
        "head": head,
        "userEntryId": user_id,
        "prompt": _short(prompt, 200),
        "timestamp": int(time.time() * 1000),
        **fields,
    }
    if "turn" not in data:
        earlier = [p for p in checkpoints(ctx) if p.get("kind") == "turn" and p.get("userEntryId")]
        data["turn"] = sum(1 for p in earlier if p["userEntryId"] == user_id)
    entry = ctx.append_entry(ENTRY_TYPE, data)
    return {**data, "id": entry.get("id")}


async def turn_started(event: dict[str, Any], ctx: Any) -> None:
    where = await repo(ctx)
    if where is None:
        return
    try:
        tree, head = await snapshots.work_tree(ctx, where)
    except GitError as exc:
        say_once(ctx, "snapshot-failed", f"pi-git-checkpoints: no checkpoint taken ({exc})")
        return
    state(ctx).pending = {"tree": tree, "head": head, "turnIndex": event.get("turnIndex")}


async def flush(ctx: Any) -> None:
    """Store the pending turn checkpoint (the turn's user message is in the session by now)."""
    current = state(ctx)
    pending, current.pending = current.pending, None
    if pending is None or not isinstance(current.repo, Repo):
        return
    try:
        await record(ctx, current.repo, pending.pop("tree"), pending.pop("head"), kind="turn", **pending)
    except GitError as exc:
        say_once(ctx, "snapshot-failed", f"pi-git-checkpoints: no checkpoint taken ({exc})")


# --- restoring ----------------------------------------------------------------------------------


async def restore(ctx: Any, where: Repo, point: dict[str, Any]) -> str:
    """Save the current files as a checkpoint, then make the work tree match ``point``."""
    if not await snapshots.object_exists(ctx, where, point["commit"]):
        return f"Checkpoint #{point['n']} is gone from the repository ({point['ref']})"
    tree, head = await snapshots.work_tree(ctx, where)
    if tree == point["tree"]:
        return f"The files already match checkpoint #{point['n']}"
    saved = await record(ctx, where, tree, head, kind="before-restore", restored=point["n"], turn=0)
    changed, kept = await snapshots.restore(ctx, where, tree, point["tree"])
    text = (
        f"Restored the files to checkpoint #{point['n']} ({changed} changed); "
        f"the files before are checkpoint #{saved['n']} (/rewind {saved['n']} undoes this)"
    )
    if kept:
        text += f"; left alone (ignored files that exist): {', '.join(kept)}"
    return text


async def rewind(args: str, ctx: Any) -> None:
    """``/rewind``: pick a checkpoint (or ``/rewind <n>``) and restore the files to it."""
    where = await repo(ctx)
    if where is None:
        reply(ctx, f"pi-git-checkpoints: {state(ctx).repo}; there are no checkpoints", "warning")
        return
    if not ctx.is_idle():
        reply(ctx, "pi-git-checkpoints: wait until the agent has finished to rewind", "warning")
        return
    points = checkpoints(ctx)
    if not points:
        reply(ctx, "No checkpoints yet: one is taken at the start of every turn")
        return
    wanted = args.strip().lstrip("#")
    if wanted:
        point = next((p for p in points if str(p["n"]) == wanted), None)
        if point is None:
            reply(ctx, f"No checkpoint #{wanted} (there are #1 to #{points[-1]['n']})", "warning")
            return
    else:
        shown = listing(points)
        rows = [label(p) for p in shown]
        if not ctx.has_ui:
            reply(ctx, "\n".join(["Checkpoints (newest first):", *rows, "Restore one with /rewind <n>"]))
            return
        choice = await ctx.ui.select("Restore the files to a checkpoint", rows)
        if choice is None:
            return
        point = shown[rows.index(choice)]
    try:
        reply(ctx, await restore(ctx, where, point))
    except (GitError, OSError) as exc:
        reply(ctx, f"pi-git-checkpoints: the restore failed: {exc}", "error")


def _descends(entries: dict[str, dict[str, Any]], entry_id: str, ancestor: str) -> bool:
    seen: set[str] = set()
    current = entries.get(entry_id, {}).get("parentId")
    while current and current not in seen:
        if current == ancestor:
            return True
        seen.add(current)
        current = entries.get(current, {}).get("parentId")
    return False


def point_after(ctx: Any, target: str) -> dict[str, Any] | None:
    """The files as of entry ``target``: the first turn checkpoint taken after it (a descendant).
    For a user message that is the checkpoint taken before the agent worked on it."""
    entries = {e["id"]: e for e in ctx.get_entries()}
    for point in checkpoints(ctx):
        if point.get("kind") == "turn" and _descends(entries, point["id"], target):
            return point
    return None


async def tree_moved(event: dict[str, Any], ctx: Any) -> None:
    """After ``/tree``: offer to bring the files back to the point the conversation moved to."""
    current = state(ctx)
    target, current.tree_target = current.tree_target or event.get("newLeafId"), None
    policy = (ctx.settings.get(SETTING) or {}).get("restoreOnTree", "ask")
    if not target or policy == "never" or (policy == "ask" and not ctx.has_ui):
        return
    point = point_after(ctx, target)
    where = await repo(ctx) if point is not None else None
    if point is None or where is None:
        return
    try:
        tree, _head = await snapshots.work_tree(ctx, where)
        if tree == point["tree"]:
            return
        if policy == "ask" and not await ctx.ui.confirm(
            "Restore the files too?",
            f"Bring the working tree back to checkpoint {label(point)}. "
            "The current files are saved as a checkpoint first.",
        ):
            return
        say(ctx, await restore(ctx, where, point))
    except (GitError, OSError) as exc:
        say(ctx, f"pi-git-checkpoints: the restore failed: {exc}", "error")
