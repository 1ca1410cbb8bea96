"""``ctx.ui`` in the terminal: what plugins show and ask goes to the screen (dialogs above the
editor, statuses, widgets, the title, notices, editor text)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_host.lib.render import sanitize
from pi_host.session.ui import HeadlessUI
from pi_mode_interactive.dialogs import ConfirmDialog, SelectDialog, TextDialog

if TYPE_CHECKING:
    from pi_mode_interactive.screen_api import Screen


class InteractiveUI(HeadlessUI):
    """The UI of every session the interactive mode serves. The run's first session is built (and
    its ``session_start`` handlers run) before the application exists: what plugins show then
    (statuses, widgets, the title, notices, editor text) is kept and shown once :meth:`attach`
    gives the application; a dialog asked then gets its default, as without a UI."""

    def __init__(self, app: Screen | None = None) -> None:
        self.app = app
        self._early: list[tuple[str, tuple[Any, ...]]] = []

    def attach(self, app: Screen) -> None:
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
