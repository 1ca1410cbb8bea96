"""ANSI-aware text helpers: visible width, truncation and wrapping that keep escape sequences
(SGR styles, OSC 8 links) balanced. Standard library only; ``wcwidth`` is used when installed."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache

from pi_host.lib.render.controls import strip_sequences

__all__ = [
    "RESET",
    "char_width",
    "pad",
    "sanitize",
    "sgr",
    "strip_ansi",
    "style",
    "truncate",
    "visible_width",
    "wrap",
]

RESET = "\x1b[0m"
_OSC8_CLOSE = "\x1b]8;;\x1b\\"

ESCAPE_RE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI (SGR and the rest)
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC ... BEL / ST
    r"|\x1b[@-Z\\-_]"  # other two-byte escapes
)
_SGR_RE = re.compile(r"\x1b\[([0-9;:]*)m")
_OSC8_RE = re.compile(r"\x1b\]8;[^;\x07\x1b]*;([^\x07\x1b]*)(?:\x07|\x1b\\)")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f]")  # ESC: only an SGR's is left

try:  # prompt_toolkit depends on wcwidth; without it unicodedata gives a close answer
    from wcwidth import wcwidth as _wcwidth
except ImportError:  # pragma: no cover - depends on the environment
    _wcwidth = None


@lru_cache(maxsize=4096)
def char_width(ch: str) -> int:
    """Terminal columns of one character: 0 for combining marks and controls, 2 for wide ones."""
    if " " <= ch <= "~":
        return 1
    if _wcwidth is not None:
        return max(0, _wcwidth(ch))
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf", "Cc"):
        return 0
    if ch == "\u200d" or "\ufe00" <= ch <= "\ufe0f":
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def strip_ansi(s: str) -> str:
    """``s`` without escape sequences."""
    return ESCAPE_RE.sub("", s) if "\x1b" in s else s


def visible_width(s: str) -> int:
    """Columns ``s`` takes on a terminal (escapes take none, wide characters two)."""
    if "\x1b" in s:
        s = ESCAPE_RE.sub("", s)
    if s.isascii() and s.isprintable():
        return len(s)
    return sum(char_width(c) for c in s)


def _tokens(s: str) -> Iterator[tuple[bool, str]]:
    """``(is_escape, text)``: escapes whole, other text one character at a time."""
    pos = 0
    for match in ESCAPE_RE.finditer(s):
        for ch in s[pos : match.start()]:
            yield False, ch
        yield True, match.group()
        pos = match.end()
    for ch in s[pos:]:
        yield False, ch


def _reset_position(params: str) -> str:
    """Where an SGR parameter list resets: ``end`` (nothing stays set), ``inside`` (a reset
    followed by new attributes) or ``none``. Colour arguments (``38;5;0``) are not resets."""
    parts = params.replace(":", ";").split(";") if params else [""]
    last = -1
    index = 0
    while index < len(parts):
        part = parts[index]
        if part in ("", "0"):
            last = index
        elif part in ("38", "48", "58") and index + 1 < len(parts):
            index += 2 if parts[index + 1] == "5" else 4 if parts[index + 1] == "2" else 0
        index += 1
    if last < 0:
        return "none"
    return "end" if last == len(parts) - 1 else "inside"


class _State:
    """The styles and link open at a point of a string, to close and reopen them."""

    def __init__(self) -> None:
        self.sgr: list[str] = []
        self.link: str | None = None

    def feed(self, escape: str) -> None:
        match = _SGR_RE.fullmatch(escape)
        if match:
            reset = _reset_position(match.group(1))
            if reset == "end":
                self.sgr = []
            elif reset == "inside":
                self.sgr = [escape]
            else:
                self.sgr.append(escape)
            return
        link = _OSC8_RE.fullmatch(escape)
        if link:
            self.link = escape if link.group(1) else None

    def copy(self) -> _State:
        other = _State()
        other.sgr = list(self.sgr)
        other.link = self.link
        return other

    def close(self) -> str:
        return (RESET if self.sgr else "") + (_OSC8_CLOSE if self.link else "")

    def reopen(self) -> str:
        return "".join(self.sgr) + (self.link or "")


def truncate(s: str, width: int, ellipsis: str = "…") -> str:
    """``s`` cut to at most ``width`` columns, ending with ``ellipsis`` when cut; styles and links
    open at the cut are closed."""
    if visible_width(s) <= width:
        return s
    if width <= 0:
        return ""
    ellipsis_width = visible_width(ellipsis)
    if ellipsis_width > width:
        ellipsis, ellipsis_width = "", 0
    room = width - ellipsis_width
    out: list[str] = []
    used = 0
    state = _State()
    for is_escape, text in _tokens(s):
        if is_escape:
            out.append(text)
            state.feed(text)
            continue
        w = char_width(text)
        if used + w > room:
            break
        out.append(text)
        used += w
    return "".join(out) + ellipsis + state.close()


def _expand_tabs(line: str, size: int) -> str:
    out: list[str] = []
    column = 0
    for is_escape, text in _tokens(line):
        if is_escape:
            out.append(text)
        elif text == "\t":
            spaces = size - column % size
            out.append(" " * spaces)
            column += spaces
        else:
            out.append(text)
            column += char_width(text)
    return "".join(out)


def sanitize(text: str, *, keep_style: bool = False, tab_size: int = 4) -> str:
    """Text from a program made safe to lay out: escape sequences and C1 controls removed with
    their payload (SGR kept with ``keep_style``, see :mod:`.controls`), carriage-return overwrites
    resolved, tabs expanded, other controls dropped."""
    text = strip_sequences(text.replace("\r\n", "\n"), keep_style=keep_style)
    lines = []
    for line in text.split("\n"):
        if "\r" in line:
            line = line.rstrip("\r").rpartition("\r")[2]
        if "\t" in line:
            line = _expand_tabs(line, tab_size)
        lines.append(line)
    return _CONTROL_RE.sub("", "\n".join(lines))


def _wrap_line(line: str, width: int, state: _State) -> list[str]:
    lines: list[str] = []
    cur: list[str] = [state.reopen()]
    cur_w = 0
    brk: tuple[int, int, _State] | None = None  # index of the last space, width through it, state
    for is_escape, text in _tokens(line):
        if is_escape:
            cur.append(text)
            state.feed(text)
            continue
        w = char_width(text)
        if w > width:  # a wide character on a one-column line
            text, w = "?", 1
        if cur_w + w > width and cur_w > 0:
            if text == " ":
                lines.append("".join(cur).rstrip(" ") + state.close())
                cur, cur_w, brk = [state.reopen()], 0, None
                continue
            if brk is not None:
                index, through, at = brk
                lines.append("".join(cur[:index]).rstrip(" ") + at.close())
                cur = [at.reopen(), *cur[index + 1 :]]
                cur_w -= through
            else:
                lines.append("".join(cur) + state.close())
                cur, cur_w = [state.reopen()], 0
            brk = None
        cur.append(text)
        cur_w += w
        if text == " ":
            brk = (len(cur) - 1, cur_w, state.copy())
    lines.append("".join(cur) + state.close())
    return lines


def wrap(s: str, width: int) -> list[str]:
    """``s`` broken into lines of at most ``width`` columns, at spaces where possible (long words
    are split). Each line closes the styles open at its end and the next line reopens them."""
    width = max(1, width)
    state = _State()
    out: list[str] = []
    for line in s.split("\n"):
        if visible_width(line) <= width and "\x1b" not in line:
            out.append(state.reopen() + line + state.close() if state.sgr or state.link else line)
            continue
        out.extend(_wrap_line(line, width, state))
    return [_tidy(line) for line in out]


def _tidy(line: str) -> str:
    """Drop an empty open/close pair left by wrapping (``ESC[1m ESC[0m`` with nothing between)."""
    return line if visible_width(line) else strip_ansi(line)


def pad(s: str, width: int) -> str:
    """``s`` filled with spaces to ``width`` columns (cut when longer)."""
    s = truncate(s, width)
    return s + " " * (width - visible_width(s))


def sgr(
    *,
    fg: object = None,
    bg: object = None,
    bold: bool = False,
    dim: bool = False,
    italic: bool = False,
    underline: bool = False,
    strike: bool = False,
) -> str:
    """The SGR escape for a style; colours are ``#rrggbb`` (truecolor), an int (256-colour
    index) or an SGR parameter string such as ``"31"``; None means the terminal default."""
    params: list[str] = []
    if bold:
        params.append("1")
    if dim:
        params.append("2")
    if italic:
        params.append("3")
    if underline:
        params.append("4")
    if strike:
        params.append("9")
    for colour, base in ((fg, 38), (bg, 48)):
        code = _colour(colour, base)
        if code:
            params.append(code)
    return f"\x1b[{';'.join(params)}m" if params else ""


def _colour(colour: object, base: int) -> str:
    if colour is None or colour == "":
        return ""
    if isinstance(colour, bool):
        return ""
    if isinstance(colour, int):
        return f"{base};5;{colour}"
    text = str(colour)
    if text.startswith("#") and len(text) == 7:
        r, g, b = int(text[1:3], 16), int(text[3:5], 16), int(text[5:7], 16)
        return f"{base};2;{r};{g};{b}"
    return text


def style(
    text: str,
    *,
    fg: object = None,
    bg: object = None,
    bold: bool = False,
    dim: bool = False,
    italic: bool = False,
    underline: bool = False,
    strike: bool = False,
) -> str:
    """``text`` in a style, reset after it (see :func:`sgr` for colours). Styles already inside
    ``text`` that reset are reapplied so the whole text keeps this style."""
    code = sgr(fg=fg, bg=bg, bold=bold, dim=dim, italic=italic, underline=underline, strike=strike)
    if not code or not text:
        return text
    if RESET in text:
        text = text.replace(RESET, RESET + code)
    return f"{code}{text}{RESET}"
