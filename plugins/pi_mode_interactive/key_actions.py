"""What the editor's keys do beyond editing: stop, clear, exit, toggles, the external editor.
The application calls these with itself; they import nothing of it (it imports them)."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from prompt_toolkit.application import run_in_terminal

App = Any
"""The :class:`~pi_mode_interactive.app.InteractiveApp`: named, not imported."""

EXIT_CONFIRM_S = 1.0
"""A second Ctrl+C within this time exits."""
DOUBLE_ESCAPE_S = 0.5


def abort(app: App) -> None:
    """Escape: stop what runs; idle with an empty editor, twice quickly is the
    ``doubleEscapeAction`` (the tree navigator)."""
    for controller in list(app.user_bash_controllers):
        controller.abort("Cancelled")
    if app.session.is_streaming or app.working:
        app.restore_queue()
        app.session.request_abort()
        return
    if app.editor.text:
        return
    now = time.monotonic()
    if now - app.last_escape < DOUBLE_ESCAPE_S:
        double_escape(app)
    else:
        app.last_escape = now


def double_escape(app: App) -> None:
    """Escape twice: stop a run, else (empty editor) the ``doubleEscapeAction``."""
    if app.session.is_streaming or app.working or app.editor.text:
        abort(app)
        return
    from pi_mode_interactive import navigation

    app.last_escape = 0.0
    app.spawn(navigation.double_escape(app))


def ctrl_c(app: App) -> None:
    now = time.monotonic()
    if now - app.last_ctrl_c < EXIT_CONFIRM_S:
        app.exit(0)
        return
    app.last_ctrl_c = now
    if app.editor.text:
        app.editor.reset()
    else:  # under the editor for that second only, never in the scrollback
        app.hint = "Press ctrl+c again to exit"
        asyncio.get_running_loop().call_later(EXIT_CONFIRM_S, _clear_hint, app, app.hint)
        app.app.invalidate()


def _clear_hint(app: App, hint: str) -> None:
    if app.hint == hint:
        app.hint = ""
        app.app.invalidate()


def ctrl_d(app: App) -> None:
    if not app.editor.text:
        app.exit(0)
    else:  # with a draft it deletes forward, as in pi's editor
        app.editor.delete()


def toggle_thinking(app: App) -> None:
    app.transcript.show_thinking = not app.transcript.show_thinking
    app.notice(f"Thinking blocks {'shown' if app.transcript.show_thinking else 'hidden'}")


def toggle_tools(app: App) -> None:
    """Ctrl+O: the latest tool output or summary in full, earlier ones by pressing again."""
    from pi_mode_interactive.fullview import expand_earlier

    expand_earlier(app, app.expand_state)


async def external_editor(app: App) -> None:
    from pi_mode_interactive.editor import edit_in_external_editor

    draft = app.editor.text
    result: list[str | None] = []
    await run_in_terminal(lambda: result.append(edit_in_external_editor(draft, os.environ)), in_executor=True)
    if result and result[0] is not None:
        app.set_editor_text(result[0])
