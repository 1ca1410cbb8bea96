"""The theme follows the terminal: truecolor, 256 colours, or none under NO_COLOR."""

from __future__ import annotations

from pi_host.lib.render import default_theme
from pi_host.lib.render.theme import to_256


def test_no_color_env(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    theme = default_theme()
    assert theme.no_color
    assert theme.fg("error", "x") == "x"
    assert theme.fg("error", "x", bold=True) == "\x1b[1mx\x1b[0m"  # bold survives


def test_color_systems(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("COLORTERM", "truecolor")
    assert default_theme().fg("error", "x").startswith("\x1b[38;2;")
    monkeypatch.setenv("COLORTERM", "")
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("TERM_PROGRAM", raising=False)
    assert default_theme().fg("error", "x").startswith("\x1b[38;5;")


def test_to_256():
    assert to_256("#000000") == 16
    assert to_256("#ffffff") == 231
    assert to_256("#ff0000") == 196
    assert 232 <= to_256("#808080") <= 255
