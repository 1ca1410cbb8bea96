"""Named colours of the interactive mode. A :class:`Theme` holds ``#rrggbb`` colours and the
colour system of the terminal; :meth:`Theme.color` gives what :func:`~pi_host.lib.render.ansi.style`
takes (truecolor hex, a 256-colour index, or None under ``NO_COLOR``).

Two themes are built in: ``dark`` (the field defaults) and ``light``. Theme files and the
``theme`` setting are read by :mod:`pi_host.lib.render.themes`."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace

from pi_host.lib.render.ansi import style as _style

__all__ = [
    "BUILTIN_THEMES",
    "Theme",
    "builtin_theme",
    "color_system_from_env",
    "default_theme",
    "to_256",
]


@dataclass(frozen=True)
class Theme:
    accent: str = "#8abeb7"
    muted: str = "#808080"
    dim: str = "#666666"
    text: str = ""
    """The default foreground ("" is the terminal's own)."""
    success: str = "#b5bd68"
    error: str = "#cc6666"
    warning: str = "#f0c674"
    user_bg: str = "#343541"
    user_bar: str = "#8abeb7"
    tool_title: str = "#81a2be"
    tool_pending_bg: str = "#282832"
    tool_success_bg: str = "#283228"
    tool_error_bg: str = "#3c2828"
    diff_added: str = "#b5bd68"
    diff_removed: str = "#cc6666"
    diff_context: str = "#808080"
    thinking: str = "#808080"
    border: str = "#5f87af"
    heading: str = "#f0c674"
    link: str = "#81a2be"
    inline_code: str = "#8abeb7"
    quote: str = "#808080"
    code_theme: str = "monokai"
    """The pygments style for code blocks."""
    color_system: str | None = "truecolor"
    """``truecolor``, ``256`` or None (no colour: ``NO_COLOR``)."""
    name: str = "dark"
    """The theme's name (a built-in, or the ``name`` of the theme file it came from)."""
    appearance: str = "dark"
    """The background the theme is made for: ``dark`` or ``light``."""
    syntax: tuple[tuple[str, str], ...] = ()
    """Code colours of a theme file (pi's ``syntax*`` tokens, e.g. ``("syntaxKeyword", "#81a2be")``);
    empty for the built-ins, whose code blocks use the pygments style :attr:`code_theme`."""

    @property
    def no_color(self) -> bool:
        return self.color_system is None

    def color(self, name: str) -> str | int | None:
        """The colour ``name`` (a field, or a ``#rrggbb`` literal) for the terminal."""
        value = getattr(self, name, name) if not name.startswith("#") else name
        if not value or self.color_system is None:
            return None
        if self.color_system == "truecolor":
            return value
        return to_256(value)

    def rich_color(self, name: str) -> str:
        """The colour for a rich style string ("" when there is none)."""
        value = self.color(name)
        if value is None:
            return ""
        return f"color({value})" if isinstance(value, int) else str(value)

    def fg(self, name: str, text: str, **attrs: bool) -> str:
        """``text`` in the foreground colour ``name`` (plus ``bold=True``...)."""
        return _style(text, fg=self.color(name), **attrs)

    def bg(self, name: str, text: str, **attrs: bool) -> str:
        return _style(text, bg=self.color(name), **attrs)

    def style(self, text: str, fg: str | None = None, bg: str | None = None, **attrs: bool) -> str:
        return _style(
            text,
            fg=self.color(fg) if fg else None,
            bg=self.color(bg) if bg else None,
            **attrs,
        )

    def with_colors(self, **colors: str) -> Theme:
        known = {f.name for f in fields(self)}
        return replace(self, **{k: v for k, v in colors.items() if k in known})


def to_256(hex_colour: str) -> int:
    """The nearest xterm 256-colour index of ``#rrggbb`` (6x6x6 cube or grey ramp)."""
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    steps = (0, 95, 135, 175, 215, 255)

    def nearest(v: int) -> int:
        return min(range(6), key=lambda i: abs(steps[i] - v))

    cr, cg, cb = nearest(r), nearest(g), nearest(b)
    cube = 16 + 36 * cr + 6 * cg + cb
    cube_err = (steps[cr] - r) ** 2 + (steps[cg] - g) ** 2 + (steps[cb] - b) ** 2
    grey = max(0, min(23, round(((r + g + b) / 3 - 8) / 10)))
    level = 8 + 10 * grey
    grey_err = (level - r) ** 2 + (level - g) ** 2 + (level - b) ** 2
    return 232 + grey if grey_err < cube_err else cube


def color_system_from_env(environ: dict[str, str] | None = None) -> str | None:
    """``None`` when ``NO_COLOR`` is set (to anything but ""), ``truecolor`` when ``COLORTERM``
    says so (or a known terminal), else ``256``."""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR", ""):
        return None
    colorterm = env.get("COLORTERM", "").lower()
    if colorterm in ("truecolor", "24bit"):
        return "truecolor"
    term_program = env.get("TERM_PROGRAM", "")
    if term_program in ("iTerm.app", "WezTerm", "vscode", "ghostty") or "kitty" in env.get("TERM", ""):
        return "truecolor"
    return "256"


_LIGHT = Theme(
    accent="#287c82",
    muted="#6c6c6c",
    dim="#8a8a8a",
    text="",
    success="#5b7a00",
    error="#c41a1a",
    warning="#a86200",
    user_bg="#e7ebf1",
    user_bar="#287c82",
    tool_title="#3b68a6",
    tool_pending_bg="#f1f1f4",
    tool_success_bg="#e5f2e5",
    tool_error_bg="#f8e3e3",
    diff_added="#5b7a00",
    diff_removed="#c41a1a",
    diff_context="#6c6c6c",
    thinking="#737373",
    border="#7a97c0",
    heading="#9a5800",
    link="#3b68a6",
    inline_code="#7b4fa0",
    quote="#6c6c6c",
    code_theme="default",
    name="light",
    appearance="light",
)
"""Readable on a white background: darker foregrounds (at least 4.5:1 for text colours), pale boxes."""

_BUILTINS = {"dark": Theme(), "light": _LIGHT}
BUILTIN_THEMES: tuple[str, ...] = tuple(_BUILTINS)
"""The names of the built-in themes, in the order a picker shows them."""


def _system(color_system: str | None | bool) -> str | None:
    return color_system_from_env() if color_system is True else color_system or None


def builtin_theme(name: str = "dark", color_system: str | None | bool = True) -> Theme:
    """The built-in theme ``name`` (``dark`` or ``light``; KeyError otherwise) for this terminal,
    or for ``color_system`` ("truecolor", "256", None) when given."""
    return replace(_BUILTINS[name], color_system=_system(color_system))


def default_theme(color_system: str | None | bool = True) -> Theme:
    """The built-in dark theme for this terminal (``NO_COLOR`` gives a colourless one).
    Pass ``color_system`` ("truecolor", "256", None) to choose instead of reading the environment."""
    return builtin_theme("dark", color_system)
