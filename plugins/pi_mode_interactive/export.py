"""``/export [path]``: the session as one self-contained HTML page, or (a ``.jsonl`` path) a
copy of the session file."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_mode_interactive.screen_api import Screen


async def export(ui: Screen, args: str = "") -> None:
    from pi_host.lib.export import default_destination, render_html, write_page
    from pi_host.lib.wire import json_bytes

    store = ui.session.store
    header = dict(
        getattr(store, "header", None) or {"type": "session", "version": 3, "id": ui.session.session_id}
    )
    entries = store.entries()
    if not entries:
        ui.notice("Nothing to export yet")
        return
    source = store.session_file or f"{ui.session.session_id}.jsonl"
    target = os.path.expanduser(args.strip()) or default_destination(source)
    target = os.path.abspath(os.path.join(ui.cwd, target))
    if os.path.isdir(target):
        target = os.path.join(target, default_destination(source))
    if store.session_file and os.path.exists(target) and os.path.samefile(target, store.session_file):
        ui.notice(f"{target} is the session file itself: choose another path", "error")
        return
    if target.endswith(".jsonl"):
        text = "".join(json_bytes(item).decode() + "\n" for item in [header, *entries])
    else:
        text = render_html(header, entries, leaf_id=store.leaf_id())
    try:
        write_page(target, text)  # a temp file renamed over the target: never half written
    except OSError as exc:
        ui.notice(f"Could not write {target}: {exc.strerror or exc}", "error")
        return
    ui.notice(f"Exported to {target}")
