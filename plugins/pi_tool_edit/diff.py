"""Diffs for ``edit`` results: a numbered display diff and a standard unified patch."""

from __future__ import annotations

import difflib

CONTEXT_LINES = 4


def first_changed_line(old_lines: list[str], new_lines: list[str]) -> int | None:
    """1-based line number in the new text of the first change."""
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, _i1, _i2, j1, _j2 in matcher.get_opcodes():
        if tag != "equal":
            return j1 + 1
    return None


def display_diff(old_lines: list[str], new_lines: list[str], context: int = CONTEXT_LINES) -> str:
    """Changed lines prefixed ``-``/``+`` with their line numbers, ``context`` lines around them
    and ``...`` where unchanged lines were skipped."""
    width = len(str(max(len(old_lines), len(new_lines), 1)))
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    out: list[str] = []
    for group in matcher.get_grouped_opcodes(context):
        if out:
            out.append(f" {'':>{width}} ...")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for offset in range(i2 - i1):
                    out.append(f" {j1 + offset + 1:>{width}} {new_lines[j1 + offset]}")
                continue
            for index in range(i1, i2):
                out.append(f"-{index + 1:>{width}} {old_lines[index]}")
            for index in range(j1, j2):
                out.append(f"+{index + 1:>{width}} {new_lines[index]}")
    return "\n".join(out)


def unified_patch(old_lines: list[str], new_lines: list[str], path: str, context: int = CONTEXT_LINES) -> str:
    lines = difflib.unified_diff(old_lines, new_lines, fromfile=path, tofile=path, n=context, lineterm="")
    return "\n".join(lines) + "\n"
