"""What every render function receives (:class:`RenderContext`) and may return
(:class:`Rendered`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pi_host.lib.render.theme import Theme, default_theme

__all__ = ["RenderContext", "Rendered", "as_rendered"]


@dataclass
class RenderContext:
    width: int
    """Columns available: every line a renderer returns must fit (visible width <= width)."""
    theme: Theme = field(default_factory=default_theme)
    expanded: bool = False
    """Ctrl+O: tool output in full instead of a short preview."""
    show_thinking: bool = True
    """Ctrl+T: False collapses thinking blocks to one dim line."""
    cwd: str = ""
    """The project directory, to show paths relative to it."""
    state: dict[str, Any] = field(default_factory=dict)
    """Kept by the app per transcript item across re-renders of that item (caches live here)."""


@dataclass
class Rendered:
    text: str
    """ANSI text, lines joined by ``\\n``, no trailing newline."""
    stable: int = 0
    """How many leading lines will never change again (the app may print them to scrollback)."""

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n") if self.text else []


def as_rendered(value: Any) -> Rendered:
    """A render function's return as :class:`Rendered` (a plain string has ``stable=0``)."""
    if isinstance(value, Rendered):
        return value
    return Rendered("" if value is None else str(value), 0)
