"""Replacing a running session by another (``/new``, ``/resume``, ``/fork``, ``/clone``, and the
RPC commands of the same names), for every mode alike.

Each function asks the plugins first (``session_before_switch`` or ``session_before_fork``;
``{"cancel": True}`` keeps the session and the function returns None), stops a run in progress,
opens the new session through the CLI's ``request.new_session`` and retires the old one. The
caller then shows or serves the session returned.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SwitchError", "fork_session", "new_session", "resume_session"]


class SwitchError(Exception):
    """The switch is impossible here (no store support, no way to open sessions): one sentence."""


def _cancelled(decision: Any) -> bool:
    return isinstance(decision, dict) and bool(decision.get("cancel"))


async def _replace(request: Any, old: Any, reason: str, session_file: str | None = None) -> Any:
    if request.new_session is None:
        raise SwitchError("This run cannot open another session")
    event = {"reason": reason, **({"targetSessionFile": session_file} if session_file else {})}
    if _cancelled(await old.host.dispatch("session_before_switch", event, old.ctx)):
        return None
    if old.is_streaming:
        await old.abort()
    # The new session opens before the old one closes: a file that cannot be opened leaves the
    # current session as it was.
    fresh = await request.new_session(session_file, previous_session_file=old.store.session_file)
    await old.close(reason)
    return fresh


async def new_session(request: Any, old: Any) -> Any:
    """A fresh session in place of ``old``; None when a plugin kept ``old``."""
    return await _replace(request, old, "new")


async def resume_session(request: Any, old: Any, session_file: str) -> Any:
    """The session of ``session_file`` in place of ``old``; None when a plugin kept ``old``."""
    return await _replace(request, old, "resume", session_file)


async def fork_session(request: Any, old: Any, entry_id: str, position: str = "before") -> tuple[Any, str]:
    """Copy a branch of ``old`` into a new session file and continue there: ``before`` (``/fork``)
    ends the copy before the user message ``entry_id`` and returns its text; ``at`` (``/clone``)
    ends it at ``entry_id``. Returns ``(new session or None when a plugin kept old, text)``.

    Raises :class:`SwitchError` when the store cannot fork, and the store's ``ValueError`` /
    ``KeyError`` for an entry it cannot fork from."""
    if request.new_session is None:
        raise SwitchError("This run cannot open another session")
    store = old.store
    method = getattr(store, "fork_before" if position == "before" else "clone", None)
    if method is None:
        raise SwitchError("This session store cannot fork or clone")
    if position == "before":
        entry = store.get(entry_id) if hasattr(store, "get") else None
        if (
            entry is None
            or entry.get("type") != "message"
            or (entry.get("message") or {}).get("role") != "user"
        ):
            raise ValueError(f"Entry {entry_id} is not a user message")
    event = {"entryId": entry_id, "position": position}
    if _cancelled(await old.host.dispatch("session_before_fork", event, old.ctx)):
        return None, ""
    if old.is_streaming:
        await old.abort()
    previous = store.session_file
    await old.host.dispatch("session_shutdown", {"reason": "fork"}, old.ctx)
    if position == "before":
        text = method(entry_id) or ""
    else:
        if entry_id != store.leaf_id() and hasattr(store, "branch"):
            store.branch(entry_id)
        method()
        text = ""
    # The store now writes the new file; a new session takes it over (the old one is not closed,
    # which would close the store).
    fresh = await request.new_session(store=store, reason="fork", previous_session_file=previous)
    return fresh, text
