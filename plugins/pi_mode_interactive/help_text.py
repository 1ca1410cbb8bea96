"""Words for the user: what each key action and thinking level does (``/hotkeys``, ``/thinking``),
and the command that resumes the session, printed at exit."""

from __future__ import annotations

import os
import shlex
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_mode_interactive.screen_api import Screen

ACTIONS = {
    "tui.input.submit": "Send the message (while the agent works: steer it)",
    "tui.input.newLine": "Start a new line in the editor",
    "app.message.followUp": "Queue the message until the agent is done",
    "app.message.dequeue": "Take the queued messages back into the editor",
    "app.interrupt": "Stop the agent or a command; twice on an empty editor: the session tree",
    "app.clear": "Clear the editor; twice quickly: exit",
    "app.exit": "Exit (on an empty editor)",
    "app.thinking.toggle": "Show or hide thinking blocks",
    "app.tools.expand": "Show the latest tool output or summary in full (again: the one before)",
    "app.transcript.open": "The transcript view: scroll, search, expand blocks in place",
    "app.editor.external": "Edit the message in $VISUAL / $EDITOR",
    "app.message.copy": "Copy the last answer",
    "app.model.select": "Choose a model",
    "app.model.cycleForward": "Next model of the scoped models",
    "app.model.cycleBackward": "Previous model of the scoped models",
    "app.thinking.cycle": "Next thinking level",
    "app.session.new": "Start a new session",
    "app.session.tree": "Open the session tree",
    "app.session.fork": "Fork from an earlier message",
    "app.session.resume": "Resume another session",
}

THINKING = {
    "off": "No reasoning",
    "minimal": "Very brief reasoning (~1k tokens)",
    "low": "Light reasoning (~2k tokens)",
    "medium": "Moderate reasoning (~8k tokens)",
    "high": "Deep reasoning (~16k tokens)",
    "xhigh": "Maximum reasoning (~32k tokens)",
}


def hotkeys(ui: Screen) -> str:
    """The ``/hotkeys`` table: keys, then what they do (the action id for remapping)."""
    rows = [
        (", ".join(keys) or "(none)", ACTIONS.get(action, ""), action) for action, keys in ui.key_help.items()
    ]
    rows.append(("!cmd / !!cmd", "Run a shell command (!! keeps it out of the context)", ""))
    rows.append(("/", "Commands, prompt templates and skills", ""))
    rows.append(("@", "Mention a file", ""))
    wide = max(len(keys) for keys, _, _ in rows)
    lines = ["Keyboard shortcuts (remap by action id in <agent dir>/keybindings.json):"]
    for keys, description, action in rows:
        lines.append(f"  {keys.ljust(wide)}  {description}" + (f"  ({action})" if action else ""))
    if ui.plugin_keys:
        lines.append("Extensions:")
        wide = max(len(key) for key, _ in ui.plugin_keys)
        lines += [f"  {key.ljust(wide)}  {description}" for key, description in ui.plugin_keys]
    return "\n".join(lines)


def resume_command(ui: Screen) -> str | None:
    """``pi --session <id>`` (with ``--session-dir`` when the file is not in the agent dir's
    sessions folder), or None when nothing was saved."""
    path = getattr(ui.session.store, "session_file", None)
    if not path or not os.path.isfile(path):
        return None
    args = ["pi"]
    default = os.path.realpath(os.path.join(ui.agent_dir, "sessions"))
    if not os.path.realpath(path).startswith(default + os.sep):
        args += ["--session-dir", shlex.quote(os.path.dirname(path))]
    return " ".join([*args, "--session", ui.session.session_id])
