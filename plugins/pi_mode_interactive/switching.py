"""Replacing the shown session by another (``/new``, ``/resume``, ``/import``): the runtime makes
the new one, the screen shows it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_mode_interactive.screen_api import Screen


async def switch_session(ui: Screen, reason: str, session_file: str | None = None) -> bool:
    """Replace the session by a new one (``new``) or by that file's (``resume``); False when it
    stayed (a plugin refused in ``session_before_switch``, or the switch is impossible)."""
    from pi_host.runtime.switching import SwitchError, new_session, resume_session

    try:
        if session_file:
            fresh = await resume_session(ui.request.factory, ui.session, session_file)
        else:
            fresh = await new_session(ui.request.factory, ui.session)
    except SwitchError as exc:
        ui.notice(str(exc), "error")
        return False
    if fresh is None:
        ui.notice("A plugin kept the current session", "warning")
        return False
    ui.switch_session(fresh)
    return True
