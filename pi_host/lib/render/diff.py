"""Coloured diffs: the ``edit`` tool's numbered display diff, unified patches, and new files
(``write``). Lines are cut (not wrapped) to the width, keeping the line numbers readable."""

from __future__ import annotations

import re

from pi_host.lib.render.ansi import sanitize, truncate
from pi_host.lib.render.theme import Theme

__all__ = ["render_diff", "render_new_file"]

_DISPLAY_RE = re.compile(r"^([-+ ])(\s*\d*) (.*)$", re.S)
_HUNK_RE = re.compile(r"^@@ .* @@")


def _is_unified(lines: list[str]) -> bool:
    return any(_HUNK_RE.match(line) for line in lines[:20]) or (
        len(lines) > 1 and lines[0].startswith("--- ") and lines[1].startswith("+++ ")
    )


def render_diff(diff_text: str, theme: Theme, width: int, max_lines: int | None = None) -> str:
    """``diff_text`` with added lines green, removed red, context and hunk headers muted.

    Understands the display diff of ``edit`` (``+12 text``, ``-12 text``, `` 12 text``, ``...``)
    and unified patches (``---``/``+++``/``@@``). ``max_lines`` keeps the first lines and notes
    how many more there are."""
    width = max(1, width)
    lines = sanitize(diff_text.rstrip("\n")).split("\n") if diff_text.strip() else []
    unified = _is_unified(lines)
    out: list[str] = []
    for line in lines:
        out.append(truncate(_colour_line(line, theme, unified), width))
    if max_lines is not None and len(out) > max_lines:
        hidden = len(out) - max_lines
        out = out[:max_lines]
        out.append(truncate(theme.fg("muted", f"… {hidden} more diff lines"), width))
    return "\n".join(out)


def _colour_line(line: str, theme: Theme, unified: bool) -> str:
    if unified:
        if line.startswith(("+++ ", "--- ")):
            return theme.fg("muted", line, bold=True)
        if line.startswith("@@"):
            return theme.fg("accent", line)
    if line.startswith("+"):
        return _numbered(line, "diff_added", theme, unified)
    if line.startswith("-"):
        return _numbered(line, "diff_removed", theme, unified)
    return theme.fg("diff_context", line)


def _numbered(line: str, colour: str, theme: Theme, unified: bool) -> str:
    """A changed line: its sign and number in the colour, the text in the colour too (numbers
    dim so the text stands out)."""
    match = None if unified else _DISPLAY_RE.match(line)
    if match is None:
        return theme.fg(colour, line)
    sign, number, text = match.groups()
    return theme.fg(colour, sign + number, dim=True) + theme.fg(colour, " " + text)


def render_new_file(path: str, content: str, theme: Theme, width: int, max_lines: int | None = 10) -> str:
    """The content of a new file as added lines (numbered, green), the first ``max_lines``
    of them and a note of the rest (all with ``max_lines=None``)."""
    width = max(1, width)
    text = sanitize(content)
    lines = text.split("\n")
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()
    shown = lines if max_lines is None else lines[:max_lines]
    digits = len(str(len(lines)))
    out = [
        truncate(
            theme.fg("diff_added", f"+{index:>{digits}}", dim=True) + theme.fg("diff_added", " " + line),
            width,
        )
        for index, line in enumerate(shown, 1)
    ]
    if len(shown) < len(lines):
        out.append(truncate(theme.fg("muted", f"… {len(lines) - len(shown)} more lines"), width))
    return "\n".join(out)
