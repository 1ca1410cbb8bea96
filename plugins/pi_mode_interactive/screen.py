"""The bottom of the terminal: the prompt-toolkit layout pinned under the scrollback (live output,
spinner line, queued messages, widgets, dialog, editor, footer) and the text of each of its parts.

The app owns the state; this module only decides how it is laid out and drawn.
"""

from __future__ import annotations

import time
from typing import Any

from prompt_toolkit.application import Application
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.layout import (
    BufferControl,
    ConditionalContainer,
    DynamicContainer,
    FormattedTextControl,
    HSplit,
    Layout,
    Window,
)
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.widgets import SearchToolbar

from pi_host.lib.render import safe_for_terminal
from pi_mode_interactive import bindings as keymap
from pi_mode_interactive import completion_menu
from pi_mode_interactive.escape_input import escape_at_once

App = Any
"""The :class:`~pi_mode_interactive.app.InteractiveApp` this part of it is built for: named, not
imported (the application imports this module)."""

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class PiApplication(Application):
    def cpr_not_supported_callback(self) -> None:
        """A terminal that does not answer cursor-position requests: carry on without them
        (prompt-toolkit then assumes the screen below is free) instead of printing a warning."""


class ParsedAnsi:
    """ANSI text for a control, parsed again only when the text changed (prompt-toolkit asks for
    it on every redraw, that is on every key). The parser yields one fragment per character; runs
    of one style are merged, which makes each redraw's line splitting many times cheaper."""

    def __init__(self, text: Any) -> None:
        self.text, self._last, self._parsed = text, None, []

    def __call__(self) -> Any:
        text = self.text()
        if text != self._last:
            # what plugins draw here (footer, widgets, queued text) keeps only its styles: the
            # parser would hand text between \x01 and \x02 to the terminal as it is
            safe = "\n".join(safe_for_terminal(line) for line in text.split("\n"))
            self._last, self._parsed = text, merged_style_runs(ANSI(safe).__pt_formatted_text__())
        return self._parsed


def merged_style_runs(fragments: Any) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    style, run = None, []
    for fragment in fragments:
        if fragment[0] != style or "[ZeroWidthEscape]" in fragment[0]:
            if run:
                out.append((style, "".join(run)))
            style, run = fragment[0], []
        run.append(fragment[1])
    if run:
        out.append((style, "".join(run)))
    return out


def build_application(app: App) -> Application:
    """The one inline prompt-toolkit application of the run, with its key bindings."""
    bindings, problems = keymap.build(app)
    for line in problems:
        app.notice(f"keybindings.json: {line}", "warning")
    for line in app.shortcut_problems:
        app.notice(line, "warning")
    is_working = Condition(lambda: app.working)
    has_dialog = Condition(lambda: bool(app.dialogs))
    search = SearchToolbar(vi_mode=False)
    editor = Window(
        BufferControl(
            app.editor, input_processors=app.parts.processors, search_buffer_control=search.control
        ),
        height=Dimension(min=1, max=12),
        dont_extend_height=True,
        wrap_lines=True,
        get_line_prefix=lambda line, wrap: ANSI(
            app.paint("accent", "› ") if line == 0 and not wrap else "  "
        ),
    )
    app.editor_window = editor

    def shown(text: Any) -> Any:  # a part of the bottom area, taking no row when empty
        parsed = ParsedAnsi(text)
        return ConditionalContainer(
            Window(FormattedTextControl(parsed), dont_extend_height=True),
            filter=Condition(lambda: bool(text())),
        )

    rule = Window(height=1, char="─", style="fg:ansibrightblack")
    body = HSplit(
        [
            shown(lambda: "\n".join(visible_live(app))),
            ConditionalContainer(
                Window(FormattedTextControl(lambda: working_line(app)), height=1), filter=is_working
            ),
            shown(lambda: queue_text(app)),
            shown(lambda: widget_text(app, "above")),
            ConditionalContainer(DynamicContainer(lambda: dialog_container(app)), filter=has_dialog),
            rule,
            editor,
            search,
            rule,
            # pi's place for the / and @ menu: under the editor, the footer pushed down, not covered
            completion_menu.menu_container(app, ParsedAnsi(lambda: completion_menu.menu_text(app))),
            shown(lambda: widget_text(app, "below")),
            shown(lambda: app.paint("muted", app.hint) if app.hint else ""),
            Window(FormattedTextControl(ParsedAnsi(app.footer_text)), dont_extend_height=True),
        ]
    )
    application = PiApplication(
        layout=Layout(body, focused_element=editor),
        key_bindings=bindings,
        full_screen=False,
        mouse_support=False,
        erase_when_done=True,  # the editor and footer go; the conversation stays above
        min_redraw_interval=0.0,
        refresh_interval=None,
    )
    # Alt+key arrives as Escape and the key in one read; the parser waits ``ttimeoutlen``
    # for the rest of a split sequence, then hands over a lone Escape. With prompt-toolkit's
    # usual ``timeoutlen`` the key processor would then wait another 0.5 s in case an Alt
    # binding follows (an Escape typed before a key is not Alt+key in pi either), so Escape
    # alone is dispatched at once; two Escapes are told apart by time in ``abort``.
    application.ttimeoutlen = 0.05
    application.timeoutlen = 0.0
    escape_at_once(application.input)  # a read of one ESC byte is the Escape key: no 50 ms wait
    return application


def visible_live(app: App) -> list[str]:
    """The live (still changing) output's last lines: as many as leave the editor room."""
    rows = app.app.output.get_size().rows if app.app.is_running else 24
    room = max(3, rows - 8 - app.editor.document.line_count - completion_menu.menu_height(app))
    return app.live_lines[-room:]


def working_line(app: App) -> Any:
    frame = SPINNER[int((time.monotonic() - app.started) * 10) % len(SPINNER)]
    return [
        ("fg:ansicyan", f"{frame} "),
        ("", app.status_line),
        ("fg:ansibrightblack", f"  {app.working_hint}"),
    ]


def queue_text(app: App) -> str:
    steering, follow_up = app.queued
    lines = [app.paint("muted", "Steering: ") + text.replace("\n", " ") for text in steering]
    lines += [app.paint("muted", "Follow-up: ") + text.replace("\n", " ") for text in follow_up]
    if lines:
        lines.append(app.paint("muted", "↳ alt+up to edit all queued messages"))
    return "\n".join(lines)


def widget_text(app: App, side: str) -> str:
    return "\n".join(line for lines in app.widgets[side].values() for line in lines)


def dialog_container(app: App) -> Any:
    return app.dialogs[-1].container if app.dialogs else Window(height=0)
