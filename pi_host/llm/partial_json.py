"""Tool-call argument parsing (reference §2.3).

While a call streams, :func:`parse_partial` gives a best-effort object for the text so far (jiter's
``trailing-strings`` mode: unterminated strings show what arrived, incomplete members are left out,
an incomplete escape is held back). At the end :func:`parse_final` parses the whole text strictly
once; only when that fails does it repair raw control characters and bad backslash escapes inside
strings (a pure-Python scan that runs at most once per call, on the failure path).
"""

from __future__ import annotations

import json
from typing import Any

import jiter

_PARTIAL = "trailing-strings"


def parse_partial(text: str | bytes) -> dict[str, Any] | None:
    """The object parsed from a prefix of a JSON object, or None when nothing usable arrived yet.

    Returns None (not ``{}``) on failure so a caller can keep its previous good value.
    """
    if not text:
        return None
    data = text.encode() if isinstance(text, str) else text
    try:
        value = jiter.from_json(data, partial_mode=_PARTIAL, cache_mode="keys")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


_ESCAPABLE = frozenset('"\\/bfnrtu')
_CONTROL_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def repair_json(text: str) -> str:
    """Escape raw control characters inside strings and double invalid backslashes."""
    out: list[str] = []
    in_string = False
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if not in_string:
            if ch == '"':
                in_string = True
            out.append(ch)
        elif ch == "\\":
            nxt = text[i + 1] if i + 1 < n else ""
            if nxt == "u":
                digits = text[i + 2 : i + 6]
                if len(digits) == 4 and all(c in "0123456789abcdefABCDEF" for c in digits):
                    out.append(text[i : i + 6])
                    i += 6
                    continue
                out.append("\\\\")
            elif nxt in _ESCAPABLE:
                out.append(ch + nxt)
                i += 2
                continue
            else:
                out.append("\\\\")
        elif ch == '"':
            in_string = False
            out.append(ch)
        elif ch < " ":
            out.append(_CONTROL_ESCAPES.get(ch) or f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def parse_final(text: str) -> tuple[dict[str, Any], str | None]:
    """``(arguments, error)`` for the complete argument text of a tool call.

    Empty text means no arguments (``{}``). When the text is not a JSON object even after repair,
    the arguments are ``{}`` and ``error`` describes the failure and quotes the received text.
    """
    if not text or not text.strip():
        return {}, None
    try:
        value = jiter.from_json(text.encode(), cache_mode="keys")
    except ValueError as first:
        try:
            value = json.loads(repair_json(text))
        except ValueError:
            return {}, f"Invalid JSON in tool call arguments ({first}); received: {text}"
    if not isinstance(value, dict):
        kind = type(value).__name__ if value is not None else "null"
        return {}, f"Tool call arguments must be a JSON object, got {kind}; received: {text}"
    return value, None
