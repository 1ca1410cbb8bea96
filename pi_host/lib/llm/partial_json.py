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

import orjson

_PARTIAL = "trailing-strings"
_loads = orjson.loads


def parse_partial(text: str | bytes) -> dict[str, Any] | None:
    """The object parsed from a prefix of a JSON object, or None when nothing usable arrived yet.

    Returns None (not ``{}``) on failure so a caller can keep its previous good value.
    """
    if not text:
        return None
    data = text.encode() if isinstance(text, str) else text
    import jiter  # imported by the first tool call, not at start-up

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


MAX_ARGUMENT_DEPTH = 100
"""Deeper arguments are refused: later steps (validation, the session file's encoder) recurse."""


def nesting_depth(value: Any) -> int:
    """How deeply lists and dicts nest in ``value`` (without recursion: the value may be deep)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, depth)
        if depth > MAX_ARGUMENT_DEPTH:
            break
        stack.extend((child, depth + 1) for child in children)
    return deepest


def parse_final(text: str) -> tuple[dict[str, Any], str | None]:
    """``(arguments, error)`` for the complete argument text of a tool call.

    Empty text means no arguments (``{}``). When the text is not a JSON object even after repair,
    or nests deeper than :data:`MAX_ARGUMENT_DEPTH` levels, the arguments are ``{}`` and ``error``
    describes the failure and quotes the received text (shortened).
    """
    if not text or not text.strip():
        return {}, None
    quoted = text if len(text) <= 2000 else text[:2000] + "..."
    import jiter

    try:
        value = jiter.from_json(text.encode(), cache_mode="keys")
    except ValueError as first:
        try:
            value = json.loads(repair_json(text))
        except (ValueError, RecursionError):
            return {}, f"Invalid JSON in tool call arguments ({first}); received: {quoted}"
    if not isinstance(value, dict):
        kind = type(value).__name__ if value is not None else "null"
        return {}, f"Tool call arguments must be a JSON object, got {kind}; received: {quoted}"
    if nesting_depth(value) > MAX_ARGUMENT_DEPTH:
        return {}, f"Tool call arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels; received: {quoted}"
    return value, None


class PartialObject:
    """Incremental partial parse of one streamed JSON object (a tool call's arguments).

    A full jiter parse per delta costs O(length so far), which adds up for big arguments (a
    file's content in a ``write`` call). Most deltas only extend the string value that is being
    streamed, so this tracker follows the JSON lexical state (in a string? a key or a value? a
    half-received escape?) by looking at each delta's characters once, and when a delta stays
    inside the open value string it appends the decoded delta to that string in the last parse
    result. Anything else (a quote, a structural character, an incomplete or ``\\u`` escape) falls
    back to a full jiter ``trailing-strings`` parse of the whole text.
    """

    __slots__ = (
        "_buf",
        "value",
        "_in_string",
        "_escape",
        "_is_key",
        "_stack",
        "_last",
        "_leaf",
        "_held",
        "full_parses",
    )

    def __init__(self) -> None:
        self._buf = bytearray()
        self.value: dict[str, Any] | None = None
        self._in_string = False
        self._escape = 0  # characters of an escape sequence still to come
        self._is_key = False
        self._stack: list[str] = []
        self._last = ""  # last significant character outside strings
        self._leaf: tuple[Any, Any] | None = None  # (container, key) of the open value string
        self._held = ""  # a trailing backslash whose escape has not arrived yet (fast path only)
        self.full_parses = 0

    @property
    def text(self) -> str:
        return self._buf.decode("utf-8", "replace")

    def _scan(self, delta: str) -> None:
        in_string = self._in_string
        escape = self._escape
        for ch in delta:
            if in_string:
                if escape:
                    if escape == -1:  # the character after a backslash
                        escape = 4 if ch == "u" else 0
                    else:
                        escape -= 1
                elif ch == "\\":
                    escape = -1
                elif ch == '"':
                    in_string = False
                    self._last = '"'
            elif ch == '"':
                in_string = True
                stack = self._stack
                self._is_key = bool(stack) and stack[-1] == "{" and self._last in ("{", ",")
            elif ch in "{[":
                self._stack.append(ch)
                self._last = ch
            elif ch in "}]":
                if self._stack:
                    self._stack.pop()
                self._last = ch
            elif not ch.isspace():
                self._last = ch
        self._in_string = in_string
        self._escape = escape

    def _find_leaf(self) -> None:
        self._leaf = None
        if not (self._in_string and not self._is_key) or self.value is None:
            return
        container: Any = self.value
        while True:
            if isinstance(container, dict):
                if not container:
                    return
                key: Any = next(reversed(container))
            elif isinstance(container, list):
                if not container:
                    return
                key = len(container) - 1
            else:
                return
            item = container[key]
            if isinstance(item, str):
                self._leaf = (container, key)
                return
            container = item

    def _extend_leaf(self, decoded: str) -> None:
        container, key = self._leaf  # type: ignore[misc]
        # The open string is the last member of its container: popping it leaves one reference,
        # so CPython grows it in place (linear even for megabyte arguments).
        if container.__class__ is dict:
            text = container.pop(key)
            text += decoded
            container[key] = text
        else:
            text = container.pop()
            text += decoded
            container.append(text)

    def feed(self, delta: str) -> dict[str, Any] | None:
        """Add a delta; return the current best-effort object (None until one exists)."""
        if not delta:
            return self.value
        if (
            self._in_string
            and not self._is_key
            and self._leaf is not None
            and (self._escape == 0 or self._held)
        ):
            # Inside the value string being streamed. A delta that is a complete piece of JSON
            # string text (escapes whole, any quote escaped) leaves the lexical state as it is, so
            # it needs no character scan: decoding it both checks that and gives the text to
            # append. A backslash at the very end is held back until its escape completes (as
            # jiter's partial mode does). ``\u`` escapes go the slow way (a surrogate pair may be
            # split across deltas).
            text = self._held + delta if self._held else delta
            held = ""
            if '"' not in text and "\\" not in text:
                decoded: str | None = text
            elif "\\u" in text:
                decoded = None
            else:
                if text[-1] == "\\" and (len(text) - len(text.rstrip("\\"))) % 2:
                    text, held = text[:-1], "\\"
                try:
                    decoded = _loads('"' + text + '"') if text else ""
                except ValueError:  # closes the string, raw control characters, ...
                    decoded = None
            if decoded is not None:
                self._buf += delta.encode()
                self._held = held
                self._escape = -1 if held else 0
                if decoded:
                    self._extend_leaf(decoded)
                return self.value
        self._held = ""
        self._scan(delta)
        self._buf += delta.encode()
        self.full_parses += 1
        parsed = parse_partial(bytes(self._buf))
        if parsed is not None:
            self.value = parsed
        self._find_leaf()
        return self.value
