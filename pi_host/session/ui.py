"""``ctx.ui``: what a plugin may ask of the user interface (reference §9.5, pi's ExtensionUIContext).

A mode that has a user interface (``Mode.has_ui``: the interactive mode, later RPC) gives the
session its own :class:`HeadlessUI` subclass; every other mode keeps :class:`HeadlessUI` itself. Dialogs fire
``ui_prompt_start`` / ``ui_prompt_end`` around the wait (:class:`HookedUI`).
"""

from __future__ import annotations

from typing import Any


class HeadlessUI:
    """What a UI offers (subclass it; the interactive mode does), and the UI of modes without
    one: dialogs return their default at once (``None`` / ``False``), display calls do nothing.
    Dialogs take ``timeout`` (seconds) and ``signal`` (an abort signal) keywords."""

    async def select(self, title: str, options: list[str], **_: Any) -> str | None:
        """One of ``options``, or None when dismissed or timed out."""
        return None

    async def confirm(self, title: str, message: str = "", **_: Any) -> bool:
        """True for yes; False for no, dismissed or timed out."""
        return False

    async def input(self, title: str, placeholder: str = "", **_: Any) -> str | None:
        """A line of text, or None."""
        return None

    async def editor(self, title: str, prefill: str = "", **_: Any) -> str | None:
        """A multi-line text, or None."""
        return None

    def notify(self, message: str, kind: str = "info") -> None:
        """A one-off notice (``info``, ``warning`` or ``error``)."""

    def set_status(self, key: str, text: str | None) -> None:
        """A footer status entry of this plugin (None removes it)."""

    def set_widget(self, key: str, lines: list[str] | None, placement: str = "above") -> None:
        """Lines shown above (or ``below``) the editor until replaced or removed (None)."""

    def set_title(self, title: str) -> None:
        """The terminal window's title."""

    def set_editor_text(self, text: str) -> None:
        """Replace the editor's draft."""


UI = HeadlessUI


class HookedUI:
    """What ``ctx.ui`` returns: the session's UI, with ``ui_prompt_start`` / ``ui_prompt_end``
    fired around each dialog."""

    def __init__(self, session: Any) -> None:
        self._session = session

    async def _dialog(self, kind: str, title: str, call: Any) -> Any:
        event = {"reason": "ui_prompt", "kind": kind, "title": title}
        host, ctx = self._session.host, self._session.ctx
        await host.dispatch("ui_prompt_start", event, ctx)
        try:
            return await call
        finally:
            await host.dispatch("ui_prompt_end", dict(event), ctx)

    async def select(self, title: str, options: list[str], **options_: Any) -> str | None:
        return await self._dialog("select", title, self._session.ui.select(title, options, **options_))

    async def confirm(self, title: str, message: str = "", **options: Any) -> bool:
        return await self._dialog("confirm", title, self._session.ui.confirm(title, message, **options))

    async def input(self, title: str, placeholder: str = "", **options: Any) -> str | None:
        return await self._dialog("input", title, self._session.ui.input(title, placeholder, **options))

    async def editor(self, title: str, prefill: str = "", **options: Any) -> str | None:
        return await self._dialog("editor", title, self._session.ui.editor(title, prefill, **options))

    def __getattr__(self, name: str) -> Any:  # notify, set_status, set_widget, set_title...
        return getattr(self._session.ui, name)
