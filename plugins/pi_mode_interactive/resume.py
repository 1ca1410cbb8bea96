"""``/resume`` and ``pi -r``: pick another session of this project (Tab: every project) and
switch to it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_mode_interactive.app import InteractiveApp


def _age(modified: datetime) -> str:
    seconds = max(0, (datetime.now(UTC) - modified.astimezone(UTC)).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


async def resume(ui: InteractiveApp, args: str, at_start: bool = False) -> None:
    """Open the picker; the chosen session replaces the current one. ``at_start`` (``pi -r``):
    a cancelled picker ends the run, as pi does."""
    from pi_host.config.paths import agent_dir
    from pi_host.plugins.registrations import SessionStoreFactory
    from pi_mode_interactive.commands import switch_session

    listers = [
        f
        for f in ui.session.host.collect("register_session_stores")
        if isinstance(f, SessionStoreFactory) and f.list_sessions
    ]
    if not listers or ui.request.new_session is None:
        ui.notice("The session store cannot list sessions", "error")
        return
    current = ui.session.store.session_file
    found = [
        i for i in listers[-1].list_sessions(ui.cwd, agent_dir(), ui.request.session_dir) if i.path != current
    ]
    if not found:
        ui.notice("No other session of this project to resume")
        return
    items = []
    for info in found:
        title = (info.name or info.first_message or "").replace("\n", " ")
        items.append((info.path, title[:70], f"{info.message_count} msgs · {_age(info.modified)}"))
    picked = await ui.pick("Resume a session", items)
    if picked is None:
        if at_start:
            ui.exit(0)
        return
    if await switch_session(ui, "resume", picked):
        ui.show_messages()
        ui.notice(f"Session resumed ({picked})")
