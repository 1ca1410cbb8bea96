"""What interactive mode prints once at start, above the conversation: theme problems, the
banner (version, key hints, model) and, unless ``quietStartup`` hides them, the loaded resources."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from pi_mode_interactive.transcript import Item

if TYPE_CHECKING:
    from pi_mode_interactive.app import InteractiveApp


def show(app: InteractiveApp) -> None:
    app.show_messages()
    for line in app.theme_problems:
        app.notice(line, "warning")
    quiet = (app.session.config.settings or {}).get("quietStartup")
    if quiet is True:
        return
    version = getattr(sys.modules.get("pi_host"), "__version__", "")
    model = app.session.model
    hint = "esc interrupt · ctrl+c clear · ctrl+d exit · /hotkeys for keys"
    title = app.paint("accent", f"pi-host {version}".strip())
    label = "model: " + (model.key if model else "none (set one with --model)")
    banner = f"{title} {app.paint('muted', hint)}"
    if quiet != "header":  # "header" keeps the version and key hints only, as pi
        banner += "\n" + app.paint("muted", label)
    app.transcript.add(Item(lambda rc: app.fit(banner, rc), done=True))
    app.invalidate()
