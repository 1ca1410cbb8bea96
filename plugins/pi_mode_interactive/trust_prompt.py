"""The question pi asks at start in a project whose ``.pi/`` resources are not trusted yet (no
``--approve``/``--no-approve``, no saved decision, ``defaultProjectTrust`` is ``ask``): trust it
(remembered, and its resources load at once), not now, or never (remembered)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_mode_interactive.screen_api import Screen


def needed(app: Screen) -> bool:
    from pi_host.config.trust import decide_trust

    args = getattr(app.request, "args", None)
    if args is None or getattr(args, "approve", False) or getattr(args, "no_approve", False):
        return False  # an SDK run, or the command line decided
    if getattr(app.session.config, "project_trusted", True):
        return False  # trusted already (saved, an extension's vote, or nothing to protect)
    return decide_trust(app.cwd, None, can_ask=True).ask


async def ask(app: Screen) -> None:
    from pi_host.config.trust import protected_resources, save_trust_decision
    from pi_host.runtime.switching import SwitchError, reload_session

    found = ", ".join(os.path.relpath(path, app.cwd) for path in protected_resources(app.cwd))
    app.notice(f"Project {app.cwd} has its own resources: {found}")
    choice = await app.pick(
        "Trust this project folder?",
        [
            ("trust", "Trust", "load its .pi/ settings, extensions, skills and prompts; remembered"),
            ("later", "Not now", "skip them this time; asked again on the next start"),
            ("never", "Do not trust", "skip them; remembered"),
        ],
    )
    if choice in (None, "later"):
        app.notice("Project resources skipped (/trust changes the decision)")
        return
    try:
        save_trust_decision(app.cwd, choice == "trust")
    except (OSError, ValueError) as exc:
        app.notice(f"Could not save the decision: {exc}", "error")
        return
    if choice == "never":
        app.notice(f"Saved: do not trust {app.cwd}")
        return
    try:  # the saved decision now holds: plugins, settings and context load again, trusted
        fresh = await reload_session(app.request.factory, app.session)
    except SwitchError as exc:
        app.notice(str(exc), "error")
        return
    app.switch_session(fresh)
    app.reload_keys()
    app.parts.refresh()
    app.notice(f"Saved: trust {app.cwd}; its resources are loaded")
