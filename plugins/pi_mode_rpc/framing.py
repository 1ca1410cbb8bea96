"""Stdin framing and command decoding for RPC mode.

Records are split on LF only (a U+2028 inside a JSON string is no boundary). The splitter looks
for LF in each new chunk alone and joins a line's pieces once, when it ends, so a 100 MB line
costs one pass over its bytes, not one pass per chunk (which was quadratic: 100 MB took 90 s).
"""

from __future__ import annotations

import json
from typing import Any

PARSE_PREFIX = "Failed to parse command: "
TOO_DEEP = f"{PARSE_PREFIX}JSON nested too deeply"
MAX_ECHO_DEPTH = 100
"""Deepest nesting accepted in the fields a response repeats (``id``) or names (``type``): the
encoder of the answer recurses, and an answer that cannot be written is a command never answered."""


class LineSplitter:
    """Feed it chunks of bytes; it hands back the complete lines (without their LF)."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def feed(self, chunk: bytes) -> list[bytes]:
        end = chunk.find(b"\n")
        if end < 0:
            if chunk:
                self._parts.append(chunk)
            return []
        self._parts.append(chunk[:end])
        lines = [b"".join(self._parts)]
        self._parts = []
        start = end + 1
        while (end := chunk.find(b"\n", start)) >= 0:
            lines.append(chunk[start:end])
            start = end + 1
        if start < len(chunk):
            self._parts.append(chunk[start:])
        return lines

    def rest(self) -> bytes:
        """What came after the last LF (stdin closed without one)."""
        rest = b"".join(self._parts)
        self._parts = []
        return rest


def parse_command(line: bytes) -> dict[str, Any] | str | None:
    """The command of one line; the error text of pi's ``parse`` response when it is none; None
    for a blank line (ignored)."""
    if line.endswith(b"\r"):
        line = line[:-1]
    if not line.strip():
        return None
    try:
        record = json.loads(line)
    except ValueError as exc:
        return f"{PARSE_PREFIX}{exc}"
    except RecursionError:
        # Nesting deeper than the interpreter's recursion limit: a parse error like any other,
        # not a crash of the server (V8 parses it, pi then answers "Unknown command").
        return TOO_DEEP
    if not isinstance(record, dict):
        return f"{PARSE_PREFIX}a command is a JSON object"
    if any(_deeper_than(record.get(key), MAX_ECHO_DEPTH) for key in ("id", "type")):
        return TOO_DEEP
    return record


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests arrays or objects more than ``limit`` deep (without recursing)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False
