"""The transcript view on demand (Alt+O, ``/transcript``, or from the start with ``tuiMode:
"fullscreen"``), and Ctrl+O's expansion of earlier blocks in the inline transcript.

The view runs as a full-screen application of its own on the terminal's alternate screen while
the inline one steps aside (prompt-toolkit's ``in_terminal``): the scrollback is left as it was,
and leaving brings the editor back with its draft. Output that finishes meanwhile waits and is
printed to the scrollback on the way out. The block selected when leaving is the one the inline
Ctrl+O prints next (the issue's "earlier ones ... from the view").
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pi_host.lib.render import RenderContext
from pi_mode_interactive.transcript_source import SessionBlocks

if TYPE_CHECKING:
    from pi_mode_interactive.screen_api import Screen

OUTPUT_REDRAW_S = 0.03
"""New output (a streaming answer) redraws the view at most this often."""
REPEAT_S = 4.0
"""Ctrl+O again within this time points at the block before the last one shown."""


def blocks_for(screen: Screen) -> SessionBlocks:
    """The session's branch as blocks, drawn with the screen's current theme and renderers."""

    def rc_for(width: int, expanded: bool) -> RenderContext:
        return RenderContext(
            width=width,
            theme=screen.theme,
            expanded=expanded,
            show_thinking=screen.transcript.show_thinking,
            cwd=screen.cwd,
            state={},
        )

    return SessionBlocks(
        screen.session.store,
        screen.feed.renderers,
        rc_for,
        theme_key=lambda: (id(screen.theme), screen.transcript.show_thinking),
        expanded=screen.transcript.expanded,
    )


async def open_view(screen: Any) -> None:
    """Show the transcript view until the user leaves it."""
    from prompt_toolkit.application import Application, in_terminal
    from prompt_toolkit.layout import Layout

    from pi_mode_interactive.transcript_view import TranscriptView

    if screen.view_app is not None:
        return
    source = blocks_for(screen)
    from pi_mode_interactive.clipboard import copy_to_clipboard

    source.live = live_drawer(screen)
    holder: list[Application] = []
    view = TranscriptView(
        source,
        on_leave=lambda: holder[0].exit(),
        paint=screen.paint,
        on_copy=lambda text: copy_to_clipboard(text, screen.write_raw),
    )
    application = Application(
        layout=Layout(view.container, focused_element=view.container.children[0]),
        key_bindings=view.keys,
        full_screen=True,
        mouse_support=True,
        output=screen.app.output,
        input=_own_input(screen.app.input),
    )
    application.ttimeoutlen, application.timeoutlen = 0.05, 0.0
    application.before_render += lambda _app: source.sync()
    holder.append(application)
    screen.view_app = _OutputRedraws(application)
    try:
        async with in_terminal():
            await application.run_async()
    finally:
        screen.view_app = None
        point_at(screen.expand_state, source.key(view.selected) if view.selected is not None else None)
        screen.app.invalidate()


class _OutputRedraws:
    """What the view's owner invalidates: a redraw for new output at most every
    ``OUTPUT_REDRAW_S`` (a streaming answer changes it every few milliseconds). A key redraws at
    once (prompt-toolkit invalidates after each one); with a minimum interval on the application
    instead, a key pressed while an answer streams waited for the interval's end."""

    def __init__(self, application: Any) -> None:
        self.application = application
        self.drawn = 0.0
        self.pending = False
        application.after_render += self._drawn

    def _drawn(self, _app: Any) -> None:
        self.drawn = time.monotonic()

    def invalidate(self) -> None:
        if self.pending:
            return
        wait = self.drawn + OUTPUT_REDRAW_S - time.monotonic()
        loop = self.application.loop
        if wait <= 0 or loop is None:
            self.application.invalidate()
            return
        self.pending = True

        def later() -> None:
            self.pending = False
            self.application.invalidate()

        loop.call_soon_threadsafe(loop.call_later, wait, later)  # invalidate() may come from a thread


def point_at(state: dict[str, Any], key: tuple[str, str] | None) -> None:
    """The next inline Ctrl+O prints the block ``key`` names (None: the latest again)."""
    state.pop("last", None)
    state["at"] = 0.0
    if key is None:
        state.pop("pointed", None)
    else:
        state["pointed"] = key


def _own_input(outer: Any) -> Any:
    """An input of the view's own on the inline application's terminal.

    Sharing the inline one's input object shares its escape-sequence parser: the inline
    application's pending flush (``ttimeoutlen`` after the Alt+O that opened the view) would
    then take a lone Escape typed in that moment and hand it to the inline application, which
    ignores it while it has stepped aside, so Escape did not leave the view. A parser of the
    view's own keeps each application's keys to itself."""
    from prompt_toolkit.input.vt100 import Vt100Input

    stdin = getattr(outer, "stdin", None)
    if type(outer) is Vt100Input and stdin is not None and stdin.isatty():
        return Vt100Input(stdin)
    return outer  # a pipe (in-process tests): no terminal to read twice


def live_drawer(screen: Any) -> Callable[[int], list[str]]:
    """``draw(width)``: what still streams (the answer, running tools), drawn as the inline app
    draws it. Each live item keeps a render state of the view's own per width (the inline app
    keeps its own in ``item.state``), so a streaming answer's finished Markdown blocks are
    rendered once and each frame renders only its open tail."""
    states: weakref.WeakKeyDictionary[Any, dict[int, dict[str, Any]]] = weakref.WeakKeyDictionary()

    def draw(width: int) -> list[str]:
        return live_lines(screen, width, states)

    return draw


def live_lines(
    screen: Any, width: int, states: weakref.WeakKeyDictionary[Any, dict[int, dict[str, Any]]] | None = None
) -> list[str]:
    """What still streams, drawn at ``width`` (with ``states`` from :func:`live_drawer`, or
    from scratch)."""
    from pi_mode_interactive.transcript import text_of

    lines: list[str] = []
    for item in screen.transcript.items:
        if item.done:
            continue
        state = {} if states is None else states.setdefault(item, {}).setdefault(width, {})
        rc = RenderContext(width=width, theme=screen.theme, expanded=screen.transcript.expanded,
                           show_thinking=screen.transcript.show_thinking, cwd=screen.cwd, state=state)  # fmt: skip
        try:
            text = text_of(item.draw(rc))
        except Exception:
            continue
        lines.extend(text.split("\n") if text else [])
    return lines


def expand_earlier(screen: Screen, state: dict[str, Any]) -> None:
    """Ctrl+O inline: print a block again in full (the scrollback itself cannot change). The
    block pointed at in the transcript view if there is one, else the most recent tool output or
    summary; pressed again soon after, the one before the last printed, and so on."""
    now = time.monotonic()
    source = blocks_for(screen)
    repeat = now - state.get("at", 0.0) < REPEAT_S and "last" in state
    state["at"] = now
    pointed = source.find(state.pop("pointed", None)) if not repeat else None
    if pointed is not None:
        index, label = pointed, "the block selected in the transcript view"
    else:
        start = source.find(state["last"]) if repeat else len(source.blocks)
        index = (start if start is not None else len(source.blocks)) - 1
        while index >= 0 and not source.expandable(index):
            index -= 1
        label = "the one before" if repeat else "the latest"
    if index < 0:
        state.pop("last", None)
        screen.notice("No earlier tool output or summary to expand" if repeat else "Nothing to expand yet")
        return
    state["last"] = source.key(index)
    screen.notice(f"Expanded {label} (ctrl+o again for the one before, alt+o for the transcript view)")
    screen.add_item(lambda rc, index=index: "\n".join(source.lines(index, rc.width, expanded=True)))
