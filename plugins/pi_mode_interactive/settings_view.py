"""The dialogs of ``/settings``: the searchable settings list, where Enter or Space changes the
highlighted entry in place and its description shows under the list, and a picker that reports
each row it moves over (the theme preview).

Both are the shared filterable picker with a little more: a picker says only what was chosen,
while these need to act before a choice is made.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.key_binding import merge_key_bindings
from prompt_toolkit.layout import FormattedTextControl, HSplit, Window
from prompt_toolkit.layout.dimension import Dimension

from pi_mode_interactive.dialogs import Dialog, SelectDialog
from pi_mode_interactive.editor.picker import Picker

SETTINGS_HINT = "Type to search · Enter/Space to change · Esc to close"


class HighlightPicker(Picker):
    """A picker that calls ``on_highlight(value)`` whenever the highlighted row changes (arrow
    keys, paging, or typing that filters the list)."""

    def __init__(
        self,
        title: str,
        items: list[tuple[Any, str, str]],
        on_done: Callable[[Any], Any] | None = None,
        *,
        on_highlight: Callable[[Any], None] | None = None,
        initial: Any = None,
    ) -> None:
        self.on_highlight: Callable[[Any], None] | None = None  # not during the base's set-up
        super().__init__(title, items, on_done, initial=initial)
        self.highlighted = self.selected_value
        self.on_highlight = on_highlight
        # added after the picker's own handler, so the list is filtered when this runs
        self.filter_buffer.on_text_changed += lambda _buffer: self.notice_highlight()

    def move(self, delta: int, *, wrap: bool = True) -> None:
        super().move(delta, wrap=wrap)
        self.notice_highlight()

    def set_items(self, items: Any, *, initial: Any = None) -> None:
        super().set_items(items, initial=initial)
        if self.on_highlight is not None:
            self.notice_highlight()

    def notice_highlight(self) -> None:
        value = self.selected_value
        if value != self.highlighted:
            self.highlighted = value
            if self.on_highlight is not None and value is not None:
                self.on_highlight(value)


class _ActivatingPicker(HighlightPicker):
    """Enter does not end the list: it hands the highlighted value to ``on_activate``."""

    on_activate: Callable[[Any], None] = staticmethod(lambda value: None)

    def confirm(self) -> None:
        value = self.selected_value
        if value is not None:
            self.on_activate(value)


def _text_window(text: Callable[[], Any]) -> Window:
    return Window(
        FormattedTextControl(text), height=Dimension(min=0), wrap_lines=True, dont_extend_height=True
    )


class SettingsDialog(Dialog):
    """The settings list. ``rows()`` gives ``(id, label, shown value)`` for every entry;
    ``activate(id)`` is called on Enter/Space and returns True when the entry changed in place
    (the rows are read again), False when it needs a sub-menu (the dialog then answers ``id``).
    ``describe(id)`` is the description shown under the list, ``paint(colour, text)`` colours
    it with the current theme (so a theme preview shows here too)."""

    def __init__(
        self,
        rows: Callable[[], list[tuple[str, str, str]]],
        activate: Callable[[str], bool],
        describe: Callable[[str], str],
        paint: Callable[[str, str], str],
        *,
        initial: str | None = None,
        query: str = "",
        title: str = "Settings",
    ) -> None:
        super().__init__(title)
        self.rows, self.activate, self.describe, self.paint = rows, activate, describe, paint
        self.picker = _ActivatingPicker(title, self._items(), on_done=self.finish)
        self.picker.on_activate = self._activate
        if query:
            from prompt_toolkit.document import Document

            self.picker.filter_buffer.document = Document(query)  # the search the list was left with
        if initial is not None:
            self.picker.set_items(self._items(), initial=initial)

        @self.keys.add(" ", filter=Condition(lambda: not self.picker.query))
        def _space(event: Any) -> None:  # Space changes the entry too, unless a search is typed
            self.picker.confirm()

        container = self.picker.container
        self._container = HSplit(
            [
                *container.children,
                _text_window(lambda: ANSI(self._description())),
                _text_window(lambda: ANSI(self.paint("dim", "  " + SETTINGS_HINT))),
            ],
            key_bindings=merge_key_bindings([container.key_bindings, self.keys]),
            style="class:picker",
        )

    def _items(self) -> list[tuple[Any, str, str]]:
        rows = self.rows()
        width = min(36, max((len(label) for _id, label, _value in rows), default=0))
        return [(entry_id, label.ljust(width), value) for entry_id, label, value in rows]

    def _description(self) -> str:
        value = self.picker.selected_value
        if value is None:
            return ""
        return "\n" + self.paint("muted", "  " + self.describe(value))

    def _activate(self, entry_id: str) -> None:
        if self.activate(entry_id):
            self.picker.set_items(self._items(), initial=entry_id)
        else:
            self.finish(entry_id)

    @property
    def container(self) -> Any:
        return self._container

    @property
    def focus(self) -> Any:
        return self.picker.input_window


class PreviewDialog(SelectDialog):
    """A choice whose highlighted row is reported as the user moves (``on_highlight``); Enter
    answers the value, Escape answers None."""

    def __init__(
        self,
        title: str,
        items: list[tuple[Any, str, str]],
        on_highlight: Callable[[Any], None],
        initial: Any = None,
    ) -> None:
        self._on_highlight = on_highlight
        super().__init__(title, items, initial)

    def make_picker(self, title: str, items: list[tuple[Any, str, str]], initial: Any) -> Any:
        picker = HighlightPicker(title, items, on_done=self.finish, initial=initial)
        picker.on_highlight = self._on_highlight
        return picker
