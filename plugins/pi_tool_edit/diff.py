"""Diffs for ``edit`` results: a numbered display diff and a standard unified patch.

Lines are compared with their line ends (:func:`line_units`), as pi's line diff does: a trailing
newline ends the last line instead of starting an empty one, so it adds no context line and no
line to the hunk counts.
"""

from __future__ import annotations

import difflib
import re

CONTEXT_LINES = 4


_LINE = re.compile(r"[^\n]*\n|[^\n]+")


def line_units(text: str) -> list[str]:
    """The lines of ``text`` with their ``\n`` (the last one may lack it)."""
    return _LINE.findall(text)


def first_changed_line(old_lines: list[str], new_lines: list[str]) -> int | None:
    """1-based line number in the new text of the first change."""
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, _i1, _i2, j1, _j2 in matcher.get_opcodes():
        if tag != "equal":
            return j1 + 1
    return None


def display_diff(
    old_lines: list[str], new_lines: list[str], context: int = CONTEXT_LINES, width: int | None = None
) -> str:
    """Changed lines prefixed ``-``/``+`` with their line numbers, ``context`` lines around them
    and ``...`` where unchanged lines were skipped (line ends are not shown). ``width`` is the
    number column's width (default: the digits of the longer side's line count)."""
    width = width or len(str(max(len(old_lines), len(new_lines), 1)))
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    old_lines = [line.removesuffix("\n") for line in old_lines]
    new_lines = [line.removesuffix("\n") for line in new_lines]
    out: list[str] = []
    for group in matcher.get_grouped_opcodes(context):
        if out:
            out.append(f" {'':>{width}} ...")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for offset in range(i2 - i1):  # context lines carry their old line number
                    out.append(f" {i1 + offset + 1:>{width}} {old_lines[i1 + offset]}")
                continue
            for index in range(i1, i2):
                out.append(f"-{index + 1:>{width}} {old_lines[index]}")
            for index in range(j1, j2):
                out.append(f"+{index + 1:>{width}} {new_lines[index]}")
    return "\n".join(out)


def unified_patch(old_lines: list[str], new_lines: list[str], path: str, context: int = CONTEXT_LINES) -> str:
    """A unified diff of lines kept with their ends; a last line without one is followed by the
    usual ``\\ No newline at end of file`` marker."""
    out: list[str] = []
    for line in difflib.unified_diff(old_lines, new_lines, fromfile=path, tofile=path, n=context):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
