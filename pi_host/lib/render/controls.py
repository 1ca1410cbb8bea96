"""The grammar of what a terminal acts on, to take it out of text that is only to be read.

Text from a model, a program or a plugin may carry escapes that do far more than colour: set the
clipboard (OSC 52) or the window title (OSC 0/2), switch to the alternate screen, make the
terminal type a report back onto stdin (``CSI 6n``), reset it (``ESC c``) or swap its character
set (``ESC ( 0``). Terminals read them in 7-bit form (``ESC [``) and many also in the C1 form
(U+009B), so both go. No match spans a line break, so text can be cleaned line by line (or a
growing text only past its last line break) with the same result as cleaned whole.
Standard library only.
"""

from __future__ import annotations

import re

__all__ = ["CONTROL_SEQUENCE_RE", "SGR_RE", "safe_for_terminal", "strip_controls", "strip_sequences"]

CONTROL_SEQUENCE_RE = re.compile(
    # CSI: parameters, intermediates, a final byte (a cut-off one loses what it had)
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    # OSC, DCS, SOS, PM, APC with their payload and their end, BEL or ST (7-bit or C1); one that
    # never ends stops at the next escape or line break: a stray introducer cannot swallow the
    # rest of a text
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d-\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"
    # nF escapes (charset designations ``ESC ( 0``, ``ESC # 8``) and two-byte ones (``ESC c``)
    r"|\x1b[ -/]*[0-~]"
    # an ESC before anything else, and the C1 controls that introduce nothing
    r"|\x1b|[\x80-\x9f]"
)
"""Every escape sequence and C1 control, whole, in the forms terminals act on."""

SGR_RE = re.compile(r"\x1b\[[0-9;:]*m")
"""A 7-bit SGR (colours and attributes): the only sequence text keeps when styles are kept."""

_OSC8 = r"\x1b\]8;[!-:<-~]*;[!-~]*(?:\x07|\x1b\\)"
_OSC8_RE = re.compile(_OSC8)
"""An OSC 8 link whose parameters and URL are printable ASCII (what renderers draw with)."""

_C1_RE = re.compile(r"[\x80-\x9f]")
_C0_KEEP_BREAKS_RE = re.compile(r"[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f]")
_LINE_CONTROL_RE = re.compile(CONTROL_SEQUENCE_RE.pattern + r"|[\x00-\x08\x0a-\x1a\x1c-\x1f\x7f]")
"""The sequences, then any other control of a single line but tab (one pass, so the BEL that
ends a kept link is not taken for a lone one)."""
_UNSAFE_LINE_RE = re.compile(
    r"\x1b(?!\[[0-9;:]*m|\]8;[!-:<-~]*;[!-~]*\x1b\\)|[\x00-\x08\x0a-\x1a\x1c-\x1f\x7f-\x9f]"
)
"""Whether a drawn line needs :func:`safe_for_terminal`'s work at all: a few microseconds for a
styled line, where the substitution takes ten times as long."""


def _has_sequence(text: str) -> bool:
    # ``in`` and ``isascii`` are C-speed; a regular expression scans about 7 ns a character
    return "\x1b" in text or (not text.isascii() and _C1_RE.search(text) is not None)


def _keep_sgr(match: re.Match[str]) -> str:
    text = match.group()
    return text if SGR_RE.fullmatch(text) else ""


def strip_sequences(text: str, *, keep_style: bool = False) -> str:
    """``text`` without escape sequences and C1 controls (SGR styles kept with ``keep_style``);
    C0 controls other than ESC are left to the caller."""
    if not _has_sequence(text):
        return text
    return CONTROL_SEQUENCE_RE.sub(_keep_sgr if keep_style else "", text)


def strip_controls(text: str, *, keep_style: bool = False) -> str:
    """``text`` without escape sequences (SGR styles kept with ``keep_style``), C1 controls and
    C0 controls other than line break and tab; a carriage return goes too (it would let one line
    overwrite another). No character of the result makes a terminal do anything but print."""
    return _C0_KEEP_BREAKS_RE.sub("", strip_sequences(text, keep_style=keep_style))


def _keep_sgr_and_links(match: re.Match[str]) -> str:
    text = match.group()
    return text if SGR_RE.fullmatch(text) or _OSC8_RE.fullmatch(text) else ""


def safe_for_terminal(line: str) -> str:
    """One line of drawn output made safe to write to the terminal as it is: SGR styles and
    plain OSC 8 links stay (renderers draw with them), every other escape and control goes,
    line breaks and carriage returns included; tabs stay."""
    if _UNSAFE_LINE_RE.search(line) is None:
        return line
    return _LINE_CONTROL_RE.sub(_keep_sgr_and_links, line)
