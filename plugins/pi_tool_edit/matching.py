"""Applying ``edit`` replacements to a file's text (reference §5.4). Pure functions, no I/O.

The text is handled as lines that keep their own endings, so a replacement changes only the
bytes it covers: untouched lines keep CRLF, LF or a lone CR exactly as they were.

* Matching happens on LF-normalised text. Every edit is located in the **original** text.
* Exact matching first. If any edit only matches after normalisation (trailing whitespace, smart
  quotes, dashes, Unicode spaces, NFKC), all edits are matched in the normalised space and each
  replacement is widened to whole lines; only those lines are rewritten.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)?")
_SINGLE_QUOTES = re.compile("[\u2018\u2019\u201a\u201b]")
_DOUBLE_QUOTES = re.compile("[\u201c\u201d\u201e\u201f]")
_DASHES = re.compile("[\u2010-\u2015\u2212]")
_SPACES = re.compile("[\u00a0\u2002-\u200a\u202f\u205f\u3000]")


class EditError(Exception):
    """An edit that cannot be applied; the message tells the model what to do next."""


@dataclass
class Edit:
    """One replacement the ``edit`` tool makes: the text to find and the text to put there."""

    old_text: str
    new_text: str


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def fuzzy_line(line: str) -> str:
    """One line in matching space: NFKC, no trailing whitespace, plain quotes, dashes, spaces."""
    line = unicodedata.normalize("NFKC", line).rstrip()
    line = _SINGLE_QUOTES.sub("'", line)
    line = _DOUBLE_QUOTES.sub('"', line)
    line = _DASHES.sub("-", line)
    return _SPACES.sub(" ", line)


def fuzzy_text(text: str) -> str:
    return "\n".join(fuzzy_line(line) for line in text.split("\n"))


def split_keep_ends(text: str) -> list[tuple[str, str]]:
    """``[(content, ending)]`` per line; the last line may have an empty ending."""
    lines = []
    for match in _LINE.finditer(text):
        chunk = match.group(0)
        if not chunk:
            continue
        body = chunk.rstrip("\r\n")
        lines.append((body, chunk[len(body) :]))
    if not lines or lines[-1][1]:
        lines.append(("", ""))  # text ending in a newline has an empty last line
    return lines


def _count(haystack: str, needle: str) -> int:
    return haystack.count(needle) if needle else 0


def _describe(index: int, total: int) -> str:
    return "" if total == 1 else f"edits[{index}]: "


def apply_edits(original: str, edits: list[Edit], path: str) -> str:
    """The new text (BOM already removed by the caller) or :class:`EditError`."""
    lines = split_keep_ends(original)
    normalized = "\n".join(body for body, _ in lines)
    fuzzy = "\n".join(fuzzy_line(body) for body, _ in lines)
    total = len(edits)
    prepared: list[tuple[str, str]] = []
    for index, edit in enumerate(edits):
        old = normalize_newlines(edit.old_text)
        if not old:
            raise EditError(
                f"{_describe(index, total)}oldText is empty in the edit of {path}. Give the exact text "
                "to replace; to add text, include a neighbouring line in oldText and newText."
            )
        prepared.append((old, normalize_newlines(edit.new_text)))

    use_fuzzy = any(old not in normalized for old, _ in prepared)
    space = fuzzy if use_fuzzy else normalized
    spans: list[tuple[int, int, int, str]] = []  # start, end, edit index, new text
    for index, (old, new) in enumerate(prepared):
        needle = fuzzy_text(old) if use_fuzzy else old
        position = space.find(needle)
        if position < 0:
            raise EditError(
                f"{_describe(index, total)}Could not find oldText in {path}. It must match the file "
                "exactly, including whitespace, indentation and line breaks. Read the file again and "
                "copy the text to replace from it."
            )
        occurrences = _count(fuzzy, fuzzy_text(old))
        if occurrences > 1:
            raise EditError(
                f"{_describe(index, total)}oldText occurs {occurrences} times in {path}. It must match "
                "exactly one place: add surrounding lines to oldText to make it unique."
            )
        spans.append((position, position + len(needle), index, new))

    spans.sort()
    for (_a_start, a_end, a_index, _), (b_start, _b_end, b_index, _) in zip(spans, spans[1:], strict=False):
        if b_start < a_end:
            first, second = sorted((a_index, b_index))
            raise EditError(
                f"edits[{first}] and edits[{second}] overlap in {path}. Merge them into one edit, or "
                "make each cover a separate part of the file."
            )

    result = _splice_fuzzy(lines, fuzzy, spans) if use_fuzzy else _splice_exact(lines, spans)
    if result == original:
        raise EditError(
            f"No changes made to {path}: the replacements leave the file exactly as it was. Check "
            "that newText differs from oldText."
        )
    return result


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for match in re.finditer("\n", text):
        starts.append(match.end())
    return starts


def _locate(starts: list[int], position: int) -> tuple[int, int]:
    """(line index, column) of a position in LF text with the given line starts."""
    import bisect

    line = bisect.bisect_right(starts, position) - 1
    return line, position - starts[line]


def _eol_for(lines: list[tuple[str, str]], first: int, last: int) -> str:
    """The line ending to use for new text replacing lines ``first..last``."""
    for index in range(first, min(last + 1, len(lines))):
        if lines[index][1]:
            return lines[index][1]
    for _, ending in lines:
        if ending:
            return ending
    return "\n"


def _original_offsets(lines: list[tuple[str, str]]) -> list[int]:
    offsets = [0]
    for body, ending in lines:
        offsets.append(offsets[-1] + len(body) + len(ending))
    return offsets


def _splice_exact(lines: list[tuple[str, str]], spans: list[tuple[int, int, int, str]]) -> str:
    normalized = "\n".join(body for body, _ in lines)
    starts = _line_starts(normalized)
    offsets = _original_offsets(lines)
    original = "".join(body + ending for body, ending in lines)

    def to_original(position: int) -> int:
        line, column = _locate(starts, position)
        if column > len(lines[line][0]):  # just past the line's content: on its ending
            return offsets[line] + len(lines[line][0]) + len(lines[line][1])
        return offsets[line] + column

    pieces: list[str] = []
    cursor = 0
    for start, end, _index, new in spans:
        first_line = _locate(starts, start)[0]
        last_line = _locate(starts, max(start, end - 1))[0]
        o_start, o_end = to_original(start), to_original(end)
        eol = _eol_for(lines, first_line, last_line)
        pieces.append(original[cursor:o_start])
        pieces.append(new.replace("\n", eol) if eol != "\n" else new)
        cursor = o_end
    pieces.append(original[cursor:])
    return "".join(pieces)


def _splice_fuzzy(lines: list[tuple[str, str]], fuzzy: str, spans: list[tuple[int, int, int, str]]) -> str:
    starts = _line_starts(fuzzy)
    fuzzy_lines = fuzzy.split("\n")
    # Widen each match to whole lines; matches sharing a line are rewritten together.
    groups: list[tuple[int, int, list[tuple[int, int, str]]]] = []
    for start, end, _index, new in spans:
        first = _locate(starts, start)[0]
        last = _locate(starts, max(start, end - 1))[0]
        if groups and first <= groups[-1][1]:
            g_first, g_last, members = groups[-1]
            groups[-1] = (g_first, max(g_last, last), [*members, (start, end, new)])
        else:
            groups.append((first, last, [(start, end, new)]))
    out: list[str] = []
    cursor = 0
    for first, last, members in groups:
        out.extend(body + ending for body, ending in lines[cursor:first])
        base = starts[first]
        # The region carries its final newline so a match that consumed it is handled too.
        region = "\n".join(fuzzy_lines[first : last + 1]) + ("\n" if lines[last][1] else "")
        for start, end, new in reversed(members):
            region = region[: start - base] + new + region[end - base :]
        tail = ""
        if lines[last][1] and region.endswith("\n"):
            region, tail = region[:-1], lines[last][1]
        eol = _eol_for(lines, first, last)
        if eol != "\n":
            region = region.replace("\n", eol)
        out.append(region + tail)
        cursor = last + 1
    out.extend(body + ending for body, ending in lines[cursor:])
    return "".join(out)
