"""pi-git-checkpoints: a snapshot of the git work tree at the start of every turn, ``/rewind`` to
bring the files back to one, and the same offer after ``/tree`` moves to an earlier point.

Snapshots are commit-free for the user: each is a tree written through a temporary index (tracked
changes and untracked files; ignored files are left out), kept by a private ref
``refs/pi-checkpoints/<session>/<n>``; the user's branch, index and stash list are never touched.
Each is recorded as a ``custom`` session entry (``git-checkpoint``) naming the entry of the
turn's user message. Restoring first saves the current files as one more checkpoint, so a
restore can itself be undone. Outside a git work tree nothing happens (the user is told once).

The work is in :mod:`pi_git_checkpoints.core` (imported when a hook first runs).
"""

from __future__ import annotations

from pi_host import Command, hookimpl

__version__ = "0.1.0"


def _core():
    from . import core

    return core


@hookimpl
async def on_turn_start(event, ctx):
    await _core().turn_started(event, ctx)


@hookimpl
async def on_message_start(event, ctx):
    # by the time the assistant answers, the turn's user message is in the session
    if getattr(event["message"], "role", None) == "assistant":
        await _core().flush(ctx)


@hookimpl
async def on_turn_end(event, ctx):
    await _core().flush(ctx)  # a turn that ended before any answer started


@hookimpl
def on_session_before_tree(event, ctx):
    _core().state(ctx).tree_target = getattr(event["preparation"], "target_id", None)


@hookimpl
async def on_session_tree(event, ctx):
    await _core().tree_moved(event, ctx)


@hookimpl
def on_session_shutdown(event, ctx):
    _core().forget(ctx)


async def _rewind(args, ctx):
    await _core().rewind(args, ctx)


@hookimpl
def register_commands():
    return [
        Command(
            name="rewind",
            handler=_rewind,
            description="Restore the files to a git checkpoint (/rewind <n> without a UI)",
        )
    ]
