"""Reading ripgrep's JSON events, the long ones without parsing them whole.

A ``match`` or ``context`` event carries the whole line and, for a match, one ``submatches``
item per match in it. For a line of hundreds of megabytes with a match every few bytes, a full
``json.loads`` builds millions of dicts (a 300 MB line: 9 GB and two minutes) only to show the
first 500 characters. Such an event is read from its bytes instead: the path, the start of the
line and the line number; the rest is never decoded.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

LONG_EVENT_BYTES = 1 << 16
"""Events at least this long are read by :func:`long_event`."""
PREFIX_BYTES = 1 << 14
"""How much of a long line's JSON string is decoded: at least 1365 characters (an escaped
character takes at most 12 bytes), more than the 500 that are shown."""

# ripgrep writes its fields in this order (grep-printer's JSON printer); anything else is parsed
# whole by the caller.
_HEAD = re.compile(
    rb'\{"type":"(match|context)","data":\{"path":(\{"(?:text|bytes)":"(?:[^"\\]|\\.)*"\}),'
    rb'"lines":\{"(text|bytes)":"'
)
# Inside a JSON string every '"' is escaped, so this sequence (its second '"' follows a ',')
# can only be the real end of the line's string.
_AFTER_LINES = b'"},"line_number":'
_LINE_NUMBER = re.compile(rb"(\d+|null)[,}]")


def parse_event(raw: bytes) -> Any:
    """One ripgrep JSON line as a dict (``lines`` cut short for a long line), or None when it
    is no JSON."""
    if len(raw) >= LONG_EVENT_BYTES:
        event = long_event(raw)
        if event is not None:
            return event
    try:
        return json.loads(raw)
    except ValueError:
        return None


def long_event(raw: bytes) -> dict[str, Any] | None:
    """``{type, data: {path, lines: {text}, line_number}}`` from the bytes of a long event, with
    ``lines.text`` the first :data:`PREFIX_BYTES` of the line's JSON string decoded (all of it
    when shorter). None when the event is not laid out as ripgrep writes it."""
    head = _HEAD.match(raw)
    if head is None:
        return None
    start = head.end()
    end = raw.find(_AFTER_LINES, start)
    if end < 0:
        return None
    number = _LINE_NUMBER.match(raw, end + len(_AFTER_LINES))
    if number is None:
        return None
    try:
        path = json.loads(head.group(2))
    except ValueError:
        return None
    whole = end - start <= PREFIX_BYTES
    body = raw[start : end if whole else start + PREFIX_BYTES]
    if head.group(3) == b"bytes":
        text = _base64_prefix(body, whole)
    else:
        text = _string_prefix(body, whole)
    if text is None:
        return None
    line_number = None if number.group(1) == b"null" else int(number.group(1))
    return {
        "type": head.group(1).decode(),
        "data": {"path": path, "lines": {"text": text}, "line_number": line_number},
    }


def _string_prefix(body: bytes, whole: bool) -> str | None:
    """The JSON string body ``body`` decoded; a cut one loses its last bytes until it decodes
    (a cut may fall inside an escape or a UTF-8 sequence; either is at most 12 bytes)."""
    for cut in range(1 if whole else 13):
        try:
            return json.loads(b'"' + body[: len(body) - cut] + b'"')
        except ValueError:
            continue
    return None


def _base64_prefix(body: bytes, whole: bool) -> str | None:
    """A line that is no UTF-8 comes base64-encoded; bad bytes show as U+FFFD."""
    if not whole:
        body = body[: len(body) - len(body) % 4]
    try:
        data = base64.b64decode(body, validate=True)
    except ValueError:
        return None
    return data.decode("utf-8", errors="replace")
