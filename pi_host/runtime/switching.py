"""Replacing a running session by another (``/new``, ``/resume``, ``/fork``, ``/clone``, and the
RPC commands of the same names), for every mode alike.

Each function asks the plugins first (``session_before_switch`` or ``session_before_fork``;
``{"cancel": True}`` keeps the session and the function returns None), stops a run in progress,
opens the new session through the run's :class:`pi_host.runtime.factory.SessionFactory` and
retires the old one. The caller then shows or serves the session returned.

Plugins reach the same switches through ``ctx`` (``ctx.new_session``, ``ctx.fork``,
``ctx.switch_session``, ``ctx.reload``, ``ctx.shutdown``): a mode that can replace its session
binds a :class:`SessionControl` to its factory, so every session it serves is built with it
(``session.control``); the ``plugin_*`` functions below use it, and refuse in one sentence where
there is none (print, JSON, SDK).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from typing import Any

from pi_host.session.errors import SessionError
from pi_host.session.store import TreeSessionStore

__all__ = [
    "SessionControl",
    "SwitchError",
    "fork_session",
    "new_session",
    "plugin_fork",
    "plugin_new_session",
    "plugin_reload",
    "plugin_shutdown",
    "plugin_switch_session",
    "reload_session",
    "resume_session",
]


class SwitchError(Exception):
    """The switch is impossible here (no store support, no way to open sessions): one sentence."""


def _cancelled(decision: Any) -> bool:
    return isinstance(decision, dict) and bool(decision.get("cancel"))


async def _replace(factory: Any, old: Any, reason: str, session_file: str | None = None) -> Any:
    if factory is None:
        raise SwitchError("This run cannot open another session")
    event = {"reason": reason, **({"targetSessionFile": session_file} if session_file else {})}
    if _cancelled(await old.host.dispatch("session_before_switch", event, old.ctx)):
        return None
    if old.is_streaming:
        await old.abort()
    # The new session opens before the old one closes: a file that cannot be opened leaves the
    # current session as it was.
    fresh = await factory.new(session_file, previous_session_file=old.store.session_file)
    await old.close(reason)
    return fresh


async def new_session(factory: Any, old: Any) -> Any:
    """A fresh session in place of ``old``; None when a plugin kept ``old``."""
    return await _replace(factory, old, "new")


async def resume_session(factory: Any, old: Any, session_file: str) -> Any:
    """The session of ``session_file`` in place of ``old``; None when a plugin kept ``old``."""
    return await _replace(factory, old, "resume", session_file)


UNSAVED = "This session has not been saved yet. Send a message before cloning or forking it."


def _require_saved(store: Any, entry_id: str, position: str) -> None:
    """pi copies a branch from the file on disk: a session whose file is not written yet (no
    answer since a fork or a switch) cannot be forked or cloned, except from its first entry
    (nothing to copy then)."""
    path = store.session_file
    if not path or os.path.exists(path):
        return
    entry = store.get(entry_id) if hasattr(store, "get") else None
    if position == "before" and entry is not None and entry.get("parentId") is None:
        return
    raise SwitchError(UNSAVED)


async def fork_session(factory: Any, old: Any, entry_id: str, position: str = "before") -> tuple[Any, str]:
    """Copy a branch of ``old`` into a new session file and continue there: ``before`` (``/fork``)
    ends the copy before the user message ``entry_id`` and returns its text; ``at`` (``/clone``)
    ends it at ``entry_id``. Returns ``(new session or None when a plugin kept old, text)``.

    Raises :class:`SwitchError` when the store cannot fork, and the store's ``ValueError`` /
    ``KeyError`` for an entry it cannot fork from."""
    if factory is None:
        raise SwitchError("This run cannot open another session")
    store = old.store
    if not isinstance(store, TreeSessionStore):
        raise SwitchError("This session store cannot fork or clone")
    method = store.fork_before if position == "before" else store.clone
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
    _require_saved(store, entry_id, position)
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
    fresh = await factory.on_store(store, reason="fork", previous_session_file=previous)
    return fresh, text


# --- what plugins use (ctx.new_session, ctx.fork...) ---------------------------------------------


class SessionControl:
    """How a mode lets plugins replace the session it serves.

    ``factory`` builds the replacements; ``show(fresh)`` makes ``fresh`` the served session (the
    mode's own ``/new`` path); ``shutdown()`` ends the mode gracefully once idle; ``reloaded()``
    runs after a reload (keybindings, completion); ``fork_text(text)`` receives a forked message's
    text (the interactive editor)."""

    def __init__(
        self,
        factory: Any,
        show: Callable[[Any], Any],
        *,
        shutdown: Callable[[], Any] | None = None,
        reloaded: Callable[[], Any] | None = None,
        fork_text: Callable[[str], Any] | None = None,
    ) -> None:
        self.factory = factory
        self.show = show
        self.shutdown = shutdown
        self.reloaded = reloaded
        self.fork_text = fork_text


def _control(session: Any, action: str) -> SessionControl:
    control = session.control
    if control is None:
        raise SwitchError(
            f"ctx.{action} needs a mode that can replace its session (interactive or rpc); "
            f"this is {session.config.mode!r}"
        )
    return control


async def _call(callback: Callable[..., Any] | None, *args: Any) -> Any:
    if callback is None:
        return None
    result = callback(*args)
    return await result if inspect.isawaitable(result) else result


async def _shown(control: SessionControl, fresh: Any, with_session: Callable[[Any], Any] | None) -> None:
    await _call(control.show, fresh)
    await _call(with_session, fresh.ctx)


async def plugin_new_session(
    session: Any,
    *,
    setup: Callable[[Any], Any] | None = None,
    with_session: Callable[[Any], Any] | None = None,
) -> dict[str, bool]:
    control = _control(session, "new_session")
    fresh = await new_session(control.factory, session)
    if fresh is None:
        return {"cancelled": True}
    if setup is not None:
        await _call(setup, fresh.store)
        fresh.messages[:] = fresh.store.build_context().messages  # what setup appended counts
    await _shown(control, fresh, with_session)
    return {"cancelled": False}


async def plugin_switch_session(
    session: Any, session_path: str, with_session: Callable[[Any], Any] | None = None
) -> dict[str, bool]:
    control = _control(session, "switch_session")
    path = os.path.abspath(os.path.join(session.config.cwd, os.path.expanduser(session_path)))
    if not os.path.isfile(path):
        raise FileNotFoundError(f"Session file not found: {path}")
    fresh = await resume_session(control.factory, session, path)
    if fresh is None:
        return {"cancelled": True}
    await _shown(control, fresh, with_session)
    return {"cancelled": False}


async def plugin_fork(
    session: Any, entry_id: str, position: str = "before", with_session: Callable[[Any], Any] | None = None
) -> dict[str, Any]:
    if position not in ("before", "at"):
        raise ValueError(f"position must be 'before' or 'at', not {position!r}")
    control = _control(session, "fork")
    fresh, text = await fork_session(control.factory, session, entry_id, position)
    if fresh is None:
        return {"cancelled": True, "text": ""}
    await _call(control.show, fresh)
    if text:
        await _call(control.fork_text, text)
    await _call(with_session, fresh.ctx)
    return {"cancelled": False, "text": text}


async def plugin_reload(session: Any) -> None:
    control = _control(session, "reload")
    if session.is_streaming:
        raise SwitchError("Cannot reload while a run is in progress: await ctx.wait_for_idle() first")
    fresh = await reload_session(control.factory, session)
    await _call(control.show, fresh)
    await _call(control.reloaded)


async def reload_session(factory: Any, old: Any) -> Any:
    """``/reload``: ``old``'s plugins, settings and context loaded again on its store."""
    if factory is None:
        raise SwitchError("This run cannot reload")
    try:
        return await factory.reload(old)
    except SessionError as exc:
        raise SwitchError(str(exc)) from exc


def plugin_shutdown(session: Any) -> None:
    control = session.control
    if control is not None and control.shutdown is not None:
        control.shutdown()
