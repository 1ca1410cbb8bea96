"""ANSI helpers: widths, truncation and wrapping that keep styles balanced."""

from __future__ import annotations

import pytest

from pi_host.lib.render import RESET, sanitize, strip_ansi, style, truncate, visible_width, wrap

RED = "\x1b[31m"
LINK = "\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\"


def test_visible_width_ignores_escapes_and_counts_wide_characters():
    assert visible_width("abc") == 3
    assert visible_width(f"{RED}abc{RESET}") == 3
    assert visible_width("中文") == 4
    assert visible_width(f"{RED}中{RESET}x") == 3
    assert visible_width(LINK) == 4
    assert visible_width("e\u0301") == 1  # combining accent takes no column
    assert visible_width("") == 0


def test_strip_ansi():
    assert strip_ansi(f"{RED}a{RESET}{LINK}") == "alink"


def test_truncate_fits_and_closes_styles():
    text = style("hello world", fg="31", bold=True)
    cut = truncate(text, 6)
    assert visible_width(cut) == 6
    assert strip_ansi(cut) == "hello…"
    assert cut.endswith(RESET)
    assert truncate("short", 10) == "short"
    assert truncate("abcdef", 0) == ""


def test_truncate_wide_characters_never_overflow():
    cut = truncate("中文中文中文", 5)
    assert visible_width(cut) <= 5
    assert cut.endswith("…")


def test_truncate_closes_an_open_link():
    cut = truncate("\x1b]8;;https://x.org\x1b\\a very long link text\x1b]8;;\x1b\\", 8)
    assert visible_width(cut) == 8
    assert cut.endswith("\x1b]8;;\x1b\\")


@pytest.mark.parametrize("width", [1, 3, 7, 10, 25])
def test_wrap_keeps_width(width):
    text = "The quick brown fox jumps over the lazy dog; supercalifragilisticexpialidocious 中文字符测试"
    lines = wrap(style(text, fg="32"), width)
    assert all(visible_width(line) <= width for line in lines), lines
    if width > 1:
        assert strip_ansi("".join(lines)).replace(" ", "") == text.replace(" ", "")


def test_wrap_carries_a_style_to_the_next_line():
    lines = wrap(f"plain {RED}red words that wrap around{RESET} end", 12)
    assert len(lines) > 2
    red_lines = [line for line in lines if "red" in strip_ansi(line) or "wrap" in strip_ansi(line)]
    for line in red_lines[1:]:
        assert line.startswith(RED)
    for line in lines:
        if RED in line:
            assert line.endswith(RESET)
    assert "\x1b" not in lines[-1] or strip_ansi(lines[-1]).endswith("end")


def test_wrap_breaks_at_spaces_and_keeps_newlines():
    assert wrap("aaa bbb ccc", 7) == ["aaa bbb", "ccc"]
    assert wrap("one\n\ntwo", 10) == ["one", "", "two"]


def test_style_nests_inside_reset():
    inner = style("b", bold=True)
    outer = style(f"a{inner}c", fg="#ff0000")
    # after the inner reset the outer colour comes back
    assert outer.count("38;2;255;0;0") == 2
    assert style("x") == "x"


def test_sanitize_removes_controls_and_expands_tabs():
    assert sanitize("a\tb") == "a   b"
    assert sanitize("progress 10%\rprogress 100%") == "progress 100%"
    assert sanitize(f"{RED}x{RESET}\x07") == "x"
    assert sanitize(f"{RED}x{RESET}", keep_style=True) == f"{RED}x{RESET}"
    assert sanitize("\x1b[2J\x1b[Hclear", keep_style=True) == "clear"
