"""The text of a session file's user and assistant messages, read without opening it as a
session: the picker's preview (the last messages) and its message search. Both the listing and
the quick scanner use these, so they live under both."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from typing import Any

from pi_host.lib.sessions.validate import describe
from pi_session_jsonl.files import iter_lines, open_regular
from pi_session_jsonl.jsonl import parse_line

QUICK_CHUNK = 1024 * 1024
"""Bytes the quick scanner reads at a time, into one reused buffer (memory stays flat)."""
ROLE_WINDOW = 1024
"""How far into a message line its role is looked for (pi and pi-host write it within ~150 bytes)."""
TAIL_READ_LIMIT = 64 * 1024 * 1024
"""How far back from the end of a file the preview's last messages are looked for."""

_LINE = b'{"type":"'
_MESSAGE = b'{"type":"message",'
_ROLE = b'"message":{"role":"'
_USER = b'user"'
_ASSISTANT = b'assistant"'


class _FullParse(Exception):
    """A line the quick scan cannot vouch for: the file is summarised by :func:`session_info`."""


def _role(data: Any, start: int, end: int) -> bytes | None:
    """``user"``/``assistant"`` (or another role's first bytes) of a message line."""
    at = data.find(_ROLE, start, min(end, start + ROLE_WINDOW))
    if at < 0:
        raise _FullParse
    at += len(_ROLE)
    if data.startswith(_USER, at):
        return _USER
    if data.startswith(_ASSISTANT, at):
        return _ASSISTANT
    return b""


def _text(content: Any) -> tuple[str, str | None]:
    """The text of a message's content, or the problem that makes it unreadable."""
    if content is None or isinstance(content, str):
        return content or "", None
    if not isinstance(content, list):
        return "", f"field message.content: expected a string or an array, got {describe(content)}"
    parts = []
    for index, block in enumerate(content):
        if not isinstance(block, dict):
            return "", f"field message.content.{index}: expected an object, got {describe(block)}"
        if block.get("type") == "text":
            text = block.get("text")
            if not isinstance(text, str):
                return "", f"field message.content.{index}.text: expected a string, got {describe(text)}"
            parts.append(text)
    return " ".join(parts), None


def _message_text(line: bytes) -> tuple[str, str] | None:
    """(role, text) of a user/assistant message line with text; None for any other line."""
    if line.startswith(_MESSAGE):
        try:
            if _role(line, 0, len(line)) not in (_USER, _ASSISTANT):
                return None
        except _FullParse:
            pass
    elif line.startswith(_LINE) or not line.strip():
        return None
    entry = parse_line(line)
    if not isinstance(entry, dict) or entry.get("type") != "message":
        return None
    message = entry.get("message")
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        return None
    text, problem = _text(message.get("content"))
    if problem is not None or not text:
        return None
    return message["role"], text


def tail_messages(path: str, limit: int = 4, block: int = 64 * 1024) -> list[tuple[str, str]]:
    """The last ``limit`` user/assistant messages with text, oldest first, as ``(role, text)``:
    read backwards from the end of the file, so a long session costs no more than a short one
    (and no more than :data:`TAIL_READ_LIMIT` bytes are looked at: it is a preview)."""
    try:
        fd = open_regular(path, os.O_RDONLY)
    except OSError:
        return []
    found: list[tuple[str, str]] = []
    try:
        end = os.fstat(fd).st_size
        stop = max(0, end - TAIL_READ_LIMIT)
        pending = b""  # the start of a line that began before the block read last
        while end > stop and len(found) < limit:
            start = max(stop, end - block)
            data = os.pread(fd, end - start, start) + pending
            lines = data.split(b"\n")
            pending = lines.pop(0) if start > 0 else b""  # (at ``stop``: a line not seen whole)
            for line in reversed(lines):
                got = _message_text(line)
                if got is not None:
                    found.append(got)
                    if len(found) == limit:
                        break
            end = start
            block = min(block * 2, 8 * 1024 * 1024)
    except OSError:
        pass
    finally:
        os.close(fd)
    found.reverse()
    return found


_buffers = threading.local()


def _lines(fd: int, chunk: int = QUICK_CHUNK) -> Iterator[tuple[bytearray | bytes, int, int]]:
    """:func:`~pi_session_jsonl.files.iter_lines` with one buffer per thread (a search reads
    many files); a line longer than ``MAX_LINE_BYTES`` comes out empty."""
    buf = getattr(_buffers, "lines", None)
    if buf is None or len(buf) != chunk:
        buf = _buffers.lines = bytearray(chunk)
    return iter_lines(fd, chunk, buffer=buf)


def _one_word(needle: str) -> bool:
    """A needle found verbatim in a line's bytes when it is in the line's text (ASCII without
    blanks, quotes, backslashes or control characters: JSON writes those unescaped)."""
    return needle.isascii() and needle.isprintable() and not any(c in needle for c in ' "\\')


def text_matches(path: str, needles: list[str]) -> bool:
    """Whether every one of ``needles`` (lowercase) is in the session's user/assistant text, the
    ``all_messages_text`` of :func:`session_info`, lowercased with runs of whitespace as one space.

    Lines are told apart by their first bytes; a one-word needle only makes the user/assistant
    lines whose bytes hold it parsed, so a search costs little more than reading the file."""
    wanted = {" ".join(needle.split()) for needle in needles} - {""}
    if not wanted:
        return True
    words = {needle for needle in wanted if _one_word(needle)}
    # With a phrase or an odd needle the whole text is needed: the user/assistant lines are
    # kept, and parsed only if the bytes hold every plain word of every needle.
    chat: list[bytes] | None = None
    if words != wanted:
        chat = []
        words = {word for needle in wanted for word in needle.split() if _one_word(word)}
    try:
        fd = open_regular(path, os.O_RDONLY)
    except OSError:
        return False
    encoded = {word: word.encode() for word in words}
    skip = len(_ROLE)
    try:
        for data, start, end in _lines(fd):
            # Only user/assistant messages hold text; other lines are told by their first bytes.
            if data.startswith(_MESSAGE, start):
                at = data.find(_ROLE, start, min(end, start + ROLE_WINDOW))
                if at >= 0 and not (
                    data.startswith(_USER, at + skip) or data.startswith(_ASSISTANT, at + skip)
                ):
                    continue
            elif start == end or data.startswith(_LINE, start):
                continue
            line = data[start:end]
            lowered = line.lower()
            hits = [word for word in words if encoded[word] in lowered]
            if chat is not None:
                chat.append(line)
                words.difference_update(hits)
                continue
            if hits and (got := _message_text(line)) is not None:
                text = got[1].lower()
                words.difference_update(word for word in hits if word in text)
                if not words:
                    return True
    except OSError:
        return False
    finally:
        os.close(fd)
    if chat is None or words:
        return not words
    texts = [got[1] for line in chat if (got := _message_text(line)) is not None]
    text = " ".join(" ".join(texts).lower().split())
    return all(needle in text for needle in wanted)
