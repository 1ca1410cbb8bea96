"""``/resume`` and ``pi -r``: pick another session (this project's, Tab: every project's) in the
session picker (:mod:`pi_mode_interactive.session_picker`) and switch to it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_mode_interactive.screen_api import Screen


async def resume(ui: Screen, args: str, at_start: bool = False) -> None:
    """Open the picker (``args``: a search to start with); the chosen session replaces the
    current one. ``at_start`` (``pi -r``): a cancelled picker ends the run, as pi does."""
    from pi_host.plugins.registrations import SessionStoreFactory
    from pi_mode_interactive.editor.keys import load_keybindings
    from pi_mode_interactive.session_picker import SessionPicker
    from pi_mode_interactive.switching import switch_session

    listers = [
        f
        for f in ui.session.host.collect("register_session_stores")
        if isinstance(f, SessionStoreFactory) and f.list_sessions
    ]
    if not listers:
        ui.notice("The session store cannot list sessions", "error")
        if at_start:
            ui.exit(1)
        return
    keymap, _problems = load_keybindings(ui.agent_dir)  # the problems were shown at start-up
    picker = SessionPicker(
        listers[-1].list_sessions,
        cwd=ui.cwd,
        agent_dir=ui.agent_dir,
        session_dir=ui.request.session_dir,
        current=getattr(ui.session.store, "session_file", None),
        query=args.strip(),
        keymap=keymap,
        invalidate=ui.invalidate,
        screen_size=ui.screen_size,
        before_focus=ui.prepare_focus,
    )
    picked = await ui.ask(picker)
    if picked is None:
        if at_start:
            ui.exit(0)
        return
    if await switch_session(ui, "resume", picked):
        ui.show_messages()
        ui.notice(f"Session resumed ({picked})")
