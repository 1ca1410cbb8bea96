"""A filterable list picker (model / session / tree selectors, ``ctx.ui.select``).

``Picker(title, items, on_done)`` builds a prompt_toolkit container: a title line, a one-line
filter input, up to ``max_visible`` rows and a position line. Typing filters the items fuzzily
(by label, and by meta when ``match_meta=True``); Up/Down move, PgUp/PgDn move by a page,
Enter picks (``on_done(value)``), Escape or Ctrl+C cancels (``on_done(None)``). ``on_done`` is
called exactly once; it may return an awaitable, which is scheduled as a task.

The key bindings live on :attr:`Picker.container`, so they work whenever the focus is inside
it: show the container (e.g. in a ``Float`` or above the editor in an ``HSplit``) and call
``app.layout.focus(picker.container)``. The keys are pi's ``tui.select.*`` actions, taken from
``keymap`` (default :data:`~.keys.DEFAULT_KEYS`; pass the dict from ``load_keybindings``).

Style classes: ``picker``, ``picker.title``, ``picker.input``, ``picker.item``,
``picker.selected``, ``picker.meta``, ``picker.status``, ``picker.empty``.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import HSplit, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.processors import BeforeInput

from .fuzzy import fuzzy_filter
from .keys import DEFAULT_KEYS, bindings_for

PickerItem = tuple[Any, str, str]


class Picker:
    def __init__(
        self,
        title: str,
        items: Sequence[PickerItem],
        on_done: Callable[[Any], Any] | None = None,
        *,
        max_visible: int = 10,
        initial: Any = None,
        match_meta: bool = False,
        keymap: dict[str, list[str]] | None = None,
        prompt: str = "> ",
    ) -> None:
        self.title = title
        self.on_done = on_done
        self.max_visible = max(1, int(max_visible))
        self.match_meta = match_meta
        self._items: list[PickerItem] = []
        self._filtered: list[int] = []
        self.selected = 0
        self.offset = 0
        self._done = False
        self._result: Any = None
        self._done_event: asyncio.Event | None = None

        self.filter_buffer = Buffer(multiline=False, on_text_changed=lambda _buffer: self._apply_filter())
        self.set_items(items, initial=initial)

        self.input_window = Window(
            BufferControl(
                self.filter_buffer, input_processors=[BeforeInput(prompt, style="class:picker.prompt")]
            ),
            height=1,
            style="class:picker.input",
        )
        self.list_window = Window(
            FormattedTextControl(self._render_rows, focusable=False, show_cursor=False),
            height=Dimension(min=1, max=self.max_visible, preferred=self.max_visible),
            wrap_lines=False,
            dont_extend_height=True,
        )
        self.container = HSplit(
            [
                Window(FormattedTextControl(lambda: [("class:picker.title", self.title)]), height=1),
                self.input_window,
                self.list_window,
                Window(FormattedTextControl(self._render_status), height=1),
            ],
            key_bindings=self._key_bindings(keymap or DEFAULT_KEYS),
            style="class:picker",
        )

    # -- state -----------------------------------------------------------------------------------

    @property
    def query(self) -> str:
        return self.filter_buffer.text

    @property
    def filtered(self) -> list[PickerItem]:
        """The items currently shown (after filtering), in display order."""
        return [self._items[index] for index in self._filtered]

    @property
    def selected_value(self) -> Any:
        if not self._filtered:
            return None
        return self._items[self._filtered[self.selected]][0]

    @property
    def done(self) -> bool:
        return self._done

    @property
    def result(self) -> Any:
        return self._result

    def set_items(self, items: Sequence[PickerItem], *, initial: Any = None) -> None:
        """Replace the items (keeps the filter text); ``initial`` selects that value if present."""
        self._items = [(value, str(label), str(meta or "")) for value, label, meta in items]
        self._apply_filter()
        if initial is not None:
            for position, index in enumerate(self._filtered):
                if self._items[index][0] == initial:
                    self.selected = position
                    self._scroll_into_view()
                    break

    def _apply_filter(self) -> None:
        indices = range(len(self._items))
        if self.match_meta:
            key: Callable[[int], str] = lambda index: f"{self._items[index][1]} {self._items[index][2]}"  # noqa: E731
        else:
            key = lambda index: self._items[index][1]  # noqa: E731
        self._filtered = fuzzy_filter(self.query, indices, key=key)
        self.selected = 0
        self.offset = 0

    def _scroll_into_view(self) -> None:
        if self.selected < self.offset:
            self.offset = self.selected
        elif self.selected >= self.offset + self.max_visible:
            self.offset = self.selected - self.max_visible + 1
        self.offset = max(0, min(self.offset, max(0, len(self._filtered) - self.max_visible)))

    def move(self, delta: int, *, wrap: bool = True) -> None:
        """Move the selection; single steps wrap around, page moves stop at the ends."""
        count = len(self._filtered)
        if count == 0:
            return
        target = self.selected + delta
        if wrap and abs(delta) == 1:
            target %= count
        else:
            target = max(0, min(count - 1, target))
        self.selected = target
        self._scroll_into_view()

    def finish(self, value: Any) -> None:
        """End the interaction with ``value`` (``None`` = cancelled); later calls are ignored."""
        if self._done:
            return
        self._done = True
        self._result = value
        if self._done_event is not None:
            self._done_event.set()
        if self.on_done is not None:
            outcome = self.on_done(value)
            if inspect.isawaitable(outcome):
                asyncio.ensure_future(outcome)

    def confirm(self) -> None:
        if self._filtered:
            self.finish(self.selected_value)

    def cancel(self) -> None:
        self.finish(None)

    async def wait(self) -> Any:
        """Await the picked value (``None`` when cancelled)."""
        if not self._done:
            if self._done_event is None:
                self._done_event = asyncio.Event()
            await self._done_event.wait()
        return self._result

    # -- rendering -------------------------------------------------------------------------------

    def visible_rows(self) -> list[tuple[bool, PickerItem]]:
        """(is_selected, item) for the rows currently in view."""
        window = self._filtered[self.offset : self.offset + self.max_visible]
        return [(self.offset + row == self.selected, self._items[index]) for row, index in enumerate(window)]

    def _render_rows(self) -> StyleAndTextTuples:
        if not self._filtered:
            return [("class:picker.empty", "  No matches")]
        fragments: StyleAndTextTuples = []
        for row, (is_selected, (_value, label, meta)) in enumerate(self.visible_rows()):
            if row:
                fragments.append(("", "\n"))
            style = "class:picker.selected" if is_selected else "class:picker.item"
            fragments.append((style, ("› " if is_selected else "  ") + label))
            if meta:
                fragments.append(("class:picker.meta", "  " + meta))
        return fragments

    def _render_status(self) -> StyleAndTextTuples:
        count = len(self._filtered)
        if count == 0:
            return [("class:picker.status", f"  0/{len(self._items)}")]
        return [("class:picker.status", f"  ({self.selected + 1}/{count})")]

    # -- keys ------------------------------------------------------------------------------------

    def _key_bindings(self, keymap: dict[str, list[str]]) -> KeyBindings:
        kb = KeyBindings()

        def bind(action: str, handler: Callable[[KeyPressEvent], None]) -> None:
            for sequence in bindings_for(keymap, action):
                kb.add(*sequence, eager=True)(handler)

        bind("tui.select.up", lambda event: self.move(-1))
        bind("tui.select.down", lambda event: self.move(1))
        bind("tui.select.pageUp", lambda event: self.move(-self.max_visible, wrap=False))
        bind("tui.select.pageDown", lambda event: self.move(self.max_visible, wrap=False))
        bind("tui.select.confirm", lambda event: self.confirm())
        bind("tui.select.cancel", lambda event: self.cancel())
        return kb
