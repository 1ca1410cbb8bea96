"""Output truncation shared by the built-in tools (reference §5.1).

Two directions:

* **head** keeps whole leading lines (``read``, ``grep``, ``find``, ``ls``): the model sees the
  start and is told how to continue;
* **tail** keeps whole trailing lines (``bash``): the end of a command's output is what matters.

Line counting ignores one trailing newline, so ``"a\\nb\\n"`` has two lines. Byte sizes are UTF-8.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024
GREP_MAX_LINE_LENGTH = 500


@dataclass
class Truncation:
    """What a truncation kept. ``to_details()`` gives pi's ``details.truncation`` record."""

    content: str
    truncated: bool
    truncated_by: Literal["lines", "bytes"] | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool = False
    first_line_exceeds_limit: bool = False
    max_lines: int = DEFAULT_MAX_LINES
    max_bytes: int = DEFAULT_MAX_BYTES

    def to_details(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "lastLinePartial": self.last_line_partial,
            "firstLineExceedsLimit": self.first_line_exceeds_limit,
            "maxLines": self.max_lines,
            "maxBytes": self.max_bytes,
        }


def format_size(size: int) -> str:
    """``512B``, ``1.5KB``, ``3.2MB`` (pi's size wording in notices)."""
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}KB"
    return f"{size / (1024 * 1024):.1f}MB"


def split_lines(content: str) -> list[str]:
    """Lines of ``content``, ignoring one trailing newline (an empty string is one empty line)."""
    lines = content.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def truncate_head(
    content: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> Truncation:
    """Keep whole leading lines within both limits."""
    lines = split_lines(content)
    total_bytes = len(content.encode("utf-8"))
    if len(lines) <= max_lines and total_bytes <= max_bytes:
        return Truncation(content, False, None, len(lines), total_bytes, len(lines), total_bytes,
                          max_lines=max_lines, max_bytes=max_bytes)  # fmt: skip
    sizes = [len(line.encode("utf-8")) for line in lines[: max_lines + 1]]
    return head_from_sizes(lines, sizes, len(lines), total_bytes, max_lines, max_bytes)


def head_from_sizes(
    lines: list[str],
    sizes: list[int],
    total_lines: int,
    total_bytes: int,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Truncation:
    """Head truncation when only a prefix of the lines is at hand (``read`` streams large files).

    ``lines``/``sizes`` hold at least the lines that could fit; ``total_*`` describe everything.
    """
    if sizes and sizes[0] > max_bytes:
        return Truncation("", True, "bytes", total_lines, total_bytes, 0, 0,
                          first_line_exceeds_limit=True, max_lines=max_lines, max_bytes=max_bytes)  # fmt: skip
    kept = 0
    used = 0
    by: Literal["lines", "bytes"] | None = None
    for index, size in enumerate(sizes):
        if kept >= max_lines:
            by = "lines"
            break
        cost = size + (1 if index else 0)
        if used + cost > max_bytes:
            by = "bytes"
            break
        used += cost
        kept += 1
    if by is None and kept < total_lines:
        by = "lines" if kept >= max_lines else "bytes"
    text = "\n".join(lines[:kept])
    return Truncation(text, by is not None, by, total_lines, total_bytes, kept, used,
                      max_lines=max_lines, max_bytes=max_bytes)  # fmt: skip


def truncate_tail(
    content: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> Truncation:
    """Keep whole trailing lines within both limits; a lone oversized last line keeps its tail."""
    return tail_of(content, len(split_lines(content)), len(content.encode("utf-8")), max_lines, max_bytes)


def tail_of(
    window: str,
    total_lines: int,
    total_bytes: int,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    window_is_partial: bool = False,
) -> Truncation:
    """Tail truncation of the last part of a longer stream (``bash`` keeps only a window).

    ``window`` is the end of the output; when ``window_is_partial`` its first line may have been
    cut by the window and is never kept whole.
    """
    lines = split_lines(window)
    if not window_is_partial and total_lines <= max_lines and total_bytes <= max_bytes:
        return Truncation(window, False, None, total_lines, total_bytes, total_lines, total_bytes,
                          max_lines=max_lines, max_bytes=max_bytes)  # fmt: skip
    trailing_newline = window.endswith("\n") and len(lines) > 0
    kept: list[str] = []
    used = 0
    by: Literal["lines", "bytes"] | None = None
    first_complete = 1 if window_is_partial else 0
    for index in range(len(lines) - 1, -1, -1):
        if len(kept) >= max_lines:
            by = "lines"
            break
        line = lines[index]
        if index < first_complete:
            by = "bytes"
            break
        size = len(line.encode("utf-8")) + (1 if kept else 0)
        if used + size > max_bytes:
            by = "bytes"
            break
        kept.append(line)
        used += size
    if by is None and len(kept) < total_lines:
        by = "lines" if len(kept) >= max_lines else "bytes"
    partial = False
    if not kept and lines:
        # The last line alone is over the byte cap: keep its end, starting on a character boundary.
        data = lines[-1].encode("utf-8")[-max_bytes:]
        start = 0
        while start < len(data) and (data[start] & 0xC0) == 0x80:
            start += 1
        kept = [data[start:].decode("utf-8", errors="replace")]
        used = len(data) - start
        partial = True
        by = "bytes"
    kept.reverse()
    text = "\n".join(kept)
    if trailing_newline and not partial and by is None:
        text += "\n"
    return Truncation(text, by is not None, by, total_lines, total_bytes, len(kept), used,
                      last_line_partial=partial, max_lines=max_lines, max_bytes=max_bytes)  # fmt: skip


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    """Cut one line to ``max_chars`` characters; returns the text and whether it was cut."""
    if len(line) <= max_chars:
        return line, False
    return line[:max_chars] + "... [truncated]", True


def with_notices(text: str, notices: list[str]) -> str:
    """Append notices in one square bracket after a blank line (several joined with ``. ``)."""
    notices = [n.rstrip(".") for n in notices if n]
    if not notices:
        return text
    return f"{text}\n\n[{'. '.join(notices)}.]"
