"""``ctx.ui`` in the terminal: dialogs shown above the editor that await the user's answer.

A dialog takes the keyboard while it is open (the editor keeps its draft); Escape dismisses it
(the default answer), a timeout or an abort signal closes it the same way.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import BufferControl, FormattedTextControl, HSplit, Window
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.processors import PasswordProcessor

from pi_host.lib.render import sanitize
from pi_host.session.ui import HeadlessUI

if TYPE_CHECKING:
    from pi_mode_interactive.app import InteractiveApp


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
        from pi_mode_interactive.editor.picker import Picker

        super().__init__(title)
        items = [option if isinstance(option, tuple) else (option, option, "") for option in options]
        self.picker = Picker(title, items, on_done=self.finish, initial=initial)

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


class InteractiveUI(HeadlessUI):
    """The UI of every session the interactive mode serves. The run's first session is built (and
    its ``session_start`` handlers run) before the application exists: what plugins show then
    (statuses, widgets, the title, notices, editor text) is kept and shown once :meth:`attach`
    gives the application; a dialog asked then gets its default, as without a UI."""

    def __init__(self, app: InteractiveApp | None = None) -> None:
        self.app = app
        self._early: list[tuple[str, tuple[Any, ...]]] = []

    def attach(self, app: InteractiveApp) -> None:
        self.app = app
        early, self._early = self._early, []
        for name, args in early:
            getattr(self, name)(*args)

    def _later(self, name: str, *args: Any) -> bool:
        if self.app is not None:
            return False
        self._early.append((name, args))
        return True

    async def select(self, title: str, options: list[str], **options_: Any) -> str | None:
        if self.app is None:
            return None
        return await self.app.ask(SelectDialog(title, options), **options_)

    async def confirm(self, title: str, message: str = "", **options: Any) -> bool:
        if self.app is None:
            return False
        return bool(await self.app.ask(ConfirmDialog(title, message), **options))

    async def input(self, title: str, placeholder: str = "", **options: Any) -> str | None:
        if self.app is None:
            return None
        return await self.app.ask(TextDialog(title, placeholder=placeholder), **options)

    async def editor(self, title: str, prefill: str = "", **options: Any) -> str | None:
        if self.app is None:
            return None
        return await self.app.ask(TextDialog(title, prefill, multiline=True), **options)

    # What a plugin shows may repeat text it did not write (a file, a model's answer): its colours
    # stay, every other escape and control goes before it reaches the screen or the title.

    def notify(self, message: str, kind: str = "info") -> None:
        if not self._later("notify", message, kind):
            self.app.notice(sanitize(str(message), keep_style=True), kind)

    def set_status(self, key: str, text: str | None) -> None:
        if self._later("set_status", key, text):
            return
        if text is None:
            self.app.statuses.pop(key, None)
        else:
            self.app.statuses[key] = sanitize(str(text), keep_style=True).replace("\n", " ")
        self.app.invalidate()

    def set_widget(self, key: str, lines: list[str] | None, placement: str = "above") -> None:
        if self._later("set_widget", key, lines, placement):
            return
        for side in self.app.widgets.values():
            side.pop(key, None)
        if lines is not None:
            self.app.widgets["below" if placement == "below" else "above"][key] = [
                sanitize(str(line), keep_style=True) for line in lines
            ]
        self.app.invalidate()

    def set_title(self, title: str) -> None:
        if not self._later("set_title", title):
            self.app.set_title(sanitize(str(title)).replace("\n", " "))

    def set_editor_text(self, text: str) -> None:
        if not self._later("set_editor_text", text):
            self.app.set_editor_text(text)
