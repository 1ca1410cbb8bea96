"""``ctx.ui`` in the terminal: dialogs shown above the editor that await the user's answer.

A dialog takes the keyboard while it is open (the editor keeps its draft); Escape dismisses it
(the default answer), a timeout or an abort signal closes it the same way.
"""

from __future__ import annotations

import asyncio
from typing import Any

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.key_binding import KeyBindings, merge_key_bindings
from prompt_toolkit.layout import BufferControl, FormattedTextControl, HSplit, Window
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.processors import PasswordProcessor


class Dialog:
    """A container with its own keys and a future for the answer."""

    default: Any = None

    def __init__(self, title: str) -> None:
        self.title = title
        self.answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.keys = KeyBindings()

        @self.keys.add("escape", eager=True)
        @self.keys.add("c-c", eager=True)
        def _dismiss(event: Any) -> None:
            self.finish(self.default)

    def finish(self, value: Any) -> None:
        if not self.answer.done():
            self.answer.set_result(value)

    def title_window(self, hint: str) -> Window:
        text = FormattedText([("bold", self.title), ("", "  "), ("fg:ansibrightblack", hint)])
        return Window(
            FormattedTextControl(text), height=Dimension(min=1), wrap_lines=True, dont_extend_height=True
        )

    @property
    def container(self) -> Any:
        raise NotImplementedError

    @property
    def focus(self) -> Any:
        return self.container


class ConfirmDialog(Dialog):
    default = False

    def __init__(self, title: str, message: str) -> None:
        super().__init__(title)
        self.message = message

        @self.keys.add("y")
        @self.keys.add("Y")
        def _yes(event: Any) -> None:
            self.finish(True)

        @self.keys.add("n")
        @self.keys.add("N")
        @self.keys.add("enter")
        def _no(event: Any) -> None:
            self.finish(False)

        body = [self.title_window("[y/N]")]
        if message:
            body.append(
                Window(
                    FormattedTextControl(message),
                    height=Dimension(min=1),
                    wrap_lines=True,
                    dont_extend_height=True,
                )
            )
        self._focus = Window(FormattedTextControl("", focusable=True, key_bindings=self.keys), height=0)
        self._container = HSplit([*body, self._focus])

    @property
    def container(self) -> Any:
        return self._container

    @property
    def focus(self) -> Any:
        return self._focus


class SelectDialog(Dialog):
    """A choice in the shared :class:`Picker` (type to filter, arrows, Enter, Escape): the
    ``(value, label, meta)`` items of the model and level pickers, or ``ctx.ui.select``'s options."""

    def __init__(self, title: str, options: list[Any], initial: Any = None) -> None:
        super().__init__(title)
        items = [option if isinstance(option, tuple) else (option, option, "") for option in options]
        self.picker = self.make_picker(title, items, initial)
        # keys a caller adds to ``self.keys`` (the model picker's Ctrl+S) work inside the picker too
        container = self.picker.container
        container.key_bindings = merge_key_bindings([container.key_bindings, self.keys])

    def make_picker(self, title: str, items: list[tuple[Any, str, str]], initial: Any) -> Any:
        """The picker the dialog shows (a subclass may bring its own kind)."""
        from pi_mode_interactive.editor.picker import Picker

        return Picker(title, items, on_done=self.finish, initial=initial)

    @property
    def container(self) -> Any:
        return self.picker.container

    @property
    def focus(self) -> Any:
        return self.picker.input_window


class TextDialog(Dialog):
    """``input`` (one line, Enter answers) and ``editor`` (many lines, Ctrl+S or Alt+Enter answer)."""

    def __init__(
        self,
        title: str,
        text: str = "",
        multiline: bool = False,
        placeholder: str = "",
        password: bool = False,
    ) -> None:
        super().__init__(title)
        self.buffer = Buffer(multiline=multiline, document=None)
        self.buffer.text = text
        self.buffer.cursor_position = len(text)

        submit_keys = [("c-s",), ("escape", "enter")] if multiline else [("enter",)]
        for keys in submit_keys:
            self.keys.add(*keys, eager=True)(lambda event: self.finish(self.buffer.text))
        hint = "ctrl+s save · esc cancel" if multiline else (placeholder or "enter submit · esc cancel")
        self._editor = Window(
            BufferControl(
                self.buffer,
                key_bindings=self.keys,
                input_processors=[PasswordProcessor()] if password else None,
            ),
            height=Dimension(min=1, max=12 if multiline else 1),
            dont_extend_height=True,
            wrap_lines=True,
            get_line_prefix=lambda line, wrap: "› " if line == 0 and not wrap else "  ",
        )
        self._container = HSplit([self.title_window(hint), self._editor])

    @property
    def container(self) -> Any:
        return self._container

    @property
    def focus(self) -> Any:
        return self._editor
