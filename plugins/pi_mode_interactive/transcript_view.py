"""The transcript view: the whole conversation on one screen, scrolled, searched, its blocks
expanded in place. A widget: it is given a block source and callbacks and knows nothing of the
application or the session.

The position is an anchor (a block and a row within it), never an absolute row: scrolling,
jumping and drawing walk only the blocks they pass or show, so a long session costs what a
short one does. A source gives ``count()``, ``lines(i, width)``, ``text(i)``, ``is_prompt(i)``,
``is_answer(i)``, ``expandable(i)``, ``is_expanded(i)`` and ``toggle(i)``.

A block is pointed at (``selected``) with Tab/Shift+Tab (tool output and summaries), a click, or
a search match; it is what Enter expands, what Ctrl+X copies, and, once the view is left, what
the inline Ctrl+O prints in full (the caller reads ``selected``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import HSplit, Window
from prompt_toolkit.layout.controls import UIContent, UIControl
from prompt_toolkit.mouse_events import MouseEventType

from pi_host.lib.render import strip_ansi
from pi_mode_interactive.editor.keys import SHIFT_ENTER_KEY

GUTTER = 2
"""Columns left of the text: the marker of the selected block."""
WHEEL_ROWS = 3

KEYS: dict[str, list[tuple[str, ...]]] = {
    "lineUp": [("up",)],
    "lineDown": [("down",)],
    "pageUp": [("pageup",)],
    "pageDown": [("pagedown",)],
    "top": [("c-home",), ("home",)],
    "bottom": [("c-end",), ("end",)],
    "previousPrompt": [("c-up",), ("[",)],
    "nextPrompt": [("c-down",), ("]",)],
    "search": [("c-f",), ("/",)],
    "nextBlock": [("tab",)],
    "previousBlock": [("s-tab",)],
    "toggle": [("enter",), ("c-o",)],
    "copy": [("c-x",), ("y",)],
    "leave": [("escape",), ("q",)],
}
"""pi's fullscreen keys where a terminal can send them (``tui.altScreen.*``: PageUp/PageDown,
Ctrl+Home/End, Ctrl+Up/Down for prompts, Ctrl+F to search, Enter/Ctrl+G for the next match);
``[``/``]`` and ``/`` as well, since many terminals swallow the Ctrl ones. Ctrl+X copies as pi's
``app.message.copy`` does (``y`` too). Escape acts at once (no Alt key is bound here, so nothing
waits to see whether one follows)."""


class TranscriptView:
    def __init__(
        self,
        source: Any,
        on_leave: Callable[[], None],
        paint: Callable[[str, str], str],
        on_copy: Callable[[str], str] | None = None,
    ) -> None:
        self.source = source
        self.on_leave = on_leave
        self.paint = paint
        self.on_copy = on_copy
        """Puts text on the clipboard and says how (a tool's name, ``OSC 52``)."""
        self.block, self.row = 0, 0
        self.follow = True
        """At the end: new output keeps the last rows in view."""
        self.selected: int | None = None
        self.searching = False
        self.query = ""
        self.found: int | None = None
        self.note = ""
        self.note_style = "warning"
        self.width, self.height = 80, 24
        self.control = _Control(self)
        self.keys = self._bindings()
        self.container = HSplit([Window(self.control), Window(_StatusControl(self), height=1)])

    # --- geometry ---------------------------------------------------------------------------

    def text_width(self) -> int:
        return max(10, self.width - GUTTER)

    def _height_of(self, index: int) -> int:
        return len(self.source.lines(index, self.text_width())) + 1  # a blank row after each block

    def _bottom(self) -> tuple[int, int]:
        """The anchor that shows the last row at the bottom of the screen."""
        index, room = self.source.count() - 1, self.height
        while index >= 0:
            height = self._height_of(index)
            if height >= room:
                return index, height - room
            room -= height
            index -= 1
        return 0, 0

    def _clamp(self) -> None:
        count = self.source.count()
        if count == 0:
            self.block, self.row = 0, 0
            return
        self.block = min(max(self.block, 0), count - 1)
        self.row = min(max(self.row, 0), max(0, self._height_of(self.block) - 1))
        bottom = self._bottom()
        if (self.block, self.row) >= bottom:
            self.block, self.row, self.follow = *bottom, True

    def scroll(self, rows: int) -> None:
        if self.follow:
            self.block, self.row = self._bottom()
        self.follow = False
        self.row += rows
        while self.row < 0 and self.block > 0:
            self.block -= 1
            self.row += self._height_of(self.block)
        while (
            self.row > 0 and self.block < self.source.count() - 1 and self.row >= self._height_of(self.block)
        ):
            self.row -= self._height_of(self.block)
            self.block += 1
        self._clamp()

    def jump(self, index: int, row: int = 0) -> None:
        self.follow = False
        self.block, self.row = index, row
        self.scroll(0)

    def top(self) -> None:
        self.jump(0)

    def bottom(self) -> None:
        self.follow = True
        self.block, self.row = self._bottom()

    def visible(self) -> list[tuple[int, str]]:
        """``(block, line)`` for each row on screen."""
        if self.follow:
            self.block, self.row = self._bottom()
        rows: list[tuple[int, str]] = []
        index, skip, count = self.block, self.row, self.source.count()
        while index < count and len(rows) < self.height:
            lines = [*self.source.lines(index, self.text_width()), ""]
            rows.extend((index, line) for line in lines[skip:])
            index, skip = index + 1, 0
        return rows[: self.height]

    def shown_blocks(self) -> list[int]:
        return sorted({index for index, _ in self.visible()})

    # --- moving between blocks --------------------------------------------------------------

    def prompt(self, step: int) -> None:
        """The previous (-1) or next (1) user message from the one at the top."""
        index = self.block + step
        if step < 0 and self.row > 0:
            index = self.block
        while 0 <= index < self.source.count():
            if self.source.is_prompt(index):
                self.jump(index)
                return
            index += step
        self.note = "no earlier prompt" if step < 0 else "no later prompt"

    def select(self, step: int) -> None:
        """Tab / Shift+Tab: the next or previous expandable block, from the one selected (or
        from the screen)."""
        shown = self.shown_blocks()
        if self.selected is None:
            start = (shown[-1] + 1 if step < 0 else shown[0] - 1) if shown else 0
        else:
            start = self.selected
        index = start + step
        while 0 <= index < self.source.count():
            if self.source.expandable(index):
                self.selected = index
                if index not in shown[1:-1]:
                    self.jump(index)
                return
            index += step

    def point(self, index: int) -> None:
        """Select the block at ``index`` (a click, a search match)."""
        if 0 <= index < self.source.count():
            self.selected = index

    def toggle(self) -> None:
        """Expand or collapse the selected block (the last expandable one on screen if none,
        or if the selected one has nothing to expand)."""
        if self.selected is None or not self.source.expandable(self.selected):
            candidates = [i for i in self.shown_blocks() if self.source.expandable(i)]
            if not candidates:
                self.note = "no tool output or summary on screen (tab selects one)"
                return
            self.selected = candidates[-1]
        keep_top = (self.block, self.row)
        self.source.toggle(self.selected)
        if self.source.is_expanded(self.selected):
            self.jump(self.selected)  # what was hidden is read from the block's start
        elif not self.follow:
            self.block, self.row = keep_top
            self._clamp()

    def copy(self) -> None:
        """The selected block's text to the clipboard; with none selected, the last answer on
        screen (pi's Ctrl+X copies the last answer when nothing is selected)."""
        index = self.selected
        if index is None:
            answers = [i for i in self.shown_blocks() if self.source.is_answer(i)]
            if not answers:
                self.note = "nothing selected to copy (tab or a click selects a block)"
                return
            index = answers[-1]
        text = self.source.text(index).strip("\n")  # a tool's output ends with a newline
        if self.on_copy is None or not text.strip():
            self.note = "nothing to copy in this block" if self.on_copy else "copying is not available here"
            return
        how = self.on_copy(text)
        lines = text.count("\n") + 1
        self.note, self.note_style = f"copied {lines} line{'s' * (lines != 1)} ({how})", "success"

    # --- search -----------------------------------------------------------------------------

    def search_step(self, step: int) -> None:
        """The next match older (-1) or newer (1) than the last one (or the screen's top)."""
        needle = self.query.lower()
        if not needle:
            return
        index = (self.found if self.found is not None else self.block + (1 if step < 0 else 0)) + step
        while 0 <= index < self.source.count():
            if needle in self.source.text(index).lower():
                self.found = index
                self.point(index)  # what Ctrl+X copies and Ctrl+O prints after leaving
                self._show_match(index, needle)
                return
            index += step
        self.note = f"no {'earlier' if step < 0 else 'later'} match for {self.query!r}"

    def _show_match(self, index: int, needle: str) -> None:
        lines = self.source.lines(index, self.text_width())
        row = next((n for n, line in enumerate(lines) if needle in strip_ansi(line).lower()), 0)
        self.jump(index, max(0, row - 2))

    # --- keys -------------------------------------------------------------------------------

    def _bindings(self) -> KeyBindings:
        keys = KeyBindings()
        browsing = Condition(lambda: not self.searching)
        searching = Condition(lambda: self.searching)
        page = lambda: max(1, self.height - 2)  # noqa: E731  (a page keeps two rows of context)
        actions: dict[str, Callable[[], None]] = {
            "lineUp": lambda: self.scroll(-1),
            "lineDown": lambda: self.scroll(1),
            "pageUp": lambda: self.scroll(-page()),
            "pageDown": lambda: self.scroll(page()),
            "top": self.top,
            "bottom": self.bottom,
            "previousPrompt": lambda: self.prompt(-1),
            "nextPrompt": lambda: self.prompt(1),
            "search": self._start_search,
            "nextBlock": lambda: self.select(1),
            "previousBlock": lambda: self.select(-1),
            "toggle": self.toggle,
            "copy": self.copy,
            "leave": self.on_leave,
        }
        for action, sequences in KEYS.items():
            for sequence in sequences:
                keys.add(*sequence, filter=browsing, eager=sequence == ("escape",))(
                    lambda event, run=actions[action]: self._run(run)
                )
        for sequence in (("enter",), ("c-g",)):
            keys.add(*sequence, filter=searching)(lambda event: self._run(lambda: self.search_step(-1)))
        for sequence in ((SHIFT_ENTER_KEY,), ("c-r",)):
            keys.add(*sequence, filter=searching)(lambda event: self._run(lambda: self.search_step(1)))
        keys.add("escape", filter=searching, eager=True)(lambda event: self._run(self._close_search))
        keys.add("backspace", filter=searching)(lambda event: self._run(self._erase))
        keys.add("<any>", filter=searching)(lambda event: self._run(lambda: self._type(event.data)))
        keys.add("pageup", filter=searching)(lambda event: self._run(lambda: self.scroll(-page())))
        keys.add("pagedown", filter=searching)(lambda event: self._run(lambda: self.scroll(page())))
        return keys

    def _run(self, action: Callable[[], None]) -> None:
        self.note, self.note_style = "", "warning"
        action()

    def _start_search(self) -> None:
        self.searching, self.query, self.found = True, "", None

    def _close_search(self) -> None:
        self.searching = False

    def _erase(self) -> None:
        self.query, self.found = self.query[:-1], None

    def _type(self, data: str) -> None:
        if data.isprintable():
            self.query += data
            self.found = None
            self.search_step(-1)

    # --- drawing ----------------------------------------------------------------------------

    def status(self) -> str:
        count = self.source.count()
        where = "end" if self.follow else f"{min(self.block + 1, count)}/{count}"
        if self.searching:
            text = f"search: {self.query}▏  enter older · shift+enter newer · esc done"
        else:
            text = "q back · / search · tab select · enter expand · y copy · ctrl+↑↓ prompts · pgup/pgdn"
        # the note first: the terminal cuts the end of a long line, and the note is the news
        note = self.paint(self.note_style, self.note) + "  " if self.note else ""
        return self.paint("muted", f" transcript {where} · ") + note + self.paint("muted", text)


class _Control(UIControl):
    def __init__(self, view: TranscriptView) -> None:
        self.view = view
        self.rows: list[tuple[int, str]] = []
        """What the last drawing showed, row by row (a click points at its block)."""
        self.parsed: dict[str, Any] = {}
        """The last drawing's rows as prompt-toolkit fragments: a key that moves the screen
        parses only the rows that were not on it."""

    def create_content(self, width: int, height: int) -> UIContent:
        view = self.view
        view.width, view.height = width, height
        rows = self.rows = view.visible()
        marker = view.paint("accent", "▌ ")
        parsed: dict[str, Any] = {}
        fragments = []
        for index, line in rows:
            text = (marker if index == view.selected else " " * GUTTER) + line
            found = parsed.get(text) or self.parsed.get(text)
            if found is None:
                found = ANSI(text).__pt_formatted_text__()
            parsed[text] = found
            fragments.append(found)
        self.parsed = parsed
        return UIContent(get_line=lambda n: fragments[n] if n < len(fragments) else [], line_count=height)

    def mouse_handler(self, mouse_event: Any) -> Any:
        if mouse_event.event_type == MouseEventType.SCROLL_UP:
            self.view.scroll(-WHEEL_ROWS)
        elif mouse_event.event_type == MouseEventType.SCROLL_DOWN:
            self.view.scroll(WHEEL_ROWS)
        elif mouse_event.event_type == MouseEventType.MOUSE_UP and mouse_event.position.y < len(self.rows):
            self.view.note = ""
            self.view.point(self.rows[mouse_event.position.y][0])
        else:
            return NotImplemented
        return None

    def is_focusable(self) -> bool:
        return True


class _StatusControl(UIControl):
    def __init__(self, view: TranscriptView) -> None:
        self.view = view

    def create_content(self, width: int, height: int) -> UIContent:
        line = ANSI(self.view.status()).__pt_formatted_text__()
        return UIContent(get_line=lambda n: line, line_count=1)
