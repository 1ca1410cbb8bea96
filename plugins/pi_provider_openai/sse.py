"""Server-sent events straight from httpx's byte stream, for the per-delta hot path.

httpx-sse (used by :func:`pi_host.llm.http.open_sse` to open the response) decodes every line
through text decoding, a line splitter and a per-line decoder, several async generators deep;
that costs more per event than everything the adapter does with the event afterwards. This
reader splits the raw bytes on blank lines with ``bytes.split`` (C speed), takes the common
single-``data:``-line event by slicing, and falls back to a full line-by-line parse (multi-line
data, ``event:``/``id:`` fields, comments, ``\\r\\n``/``\\r`` line ends) for anything else.
Events are only cut at complete blank lines, so UTF-8 sequences split across network chunks are
whole again before anyone decodes them. ``data`` is returned as bytes: orjson parses bytes
directly.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

_DATA = b"data: "


def _parse_block(block: bytes) -> list[tuple[bytes, bytes]]:
    """The events in a block of lines (normally exactly one): ``[(event_name, data)]``."""
    events: list[tuple[bytes, bytes]] = []
    name = b""
    data: list[bytes] = []
    for line in block.split(b"\n"):
        if not line:
            if data:
                events.append((name, b"\n".join(data)))
            name, data = b"", []
            continue
        if line[:1] == b":":
            continue  # a comment / keep-alive
        field, sep, value = line.partition(b":")
        if sep and value[:1] == b" ":
            value = value[1:]
        if field == b"data":
            data.append(value)
        elif field == b"event":
            name = value
        # ``id`` and ``retry`` have no use for a single POST response; unknown fields are ignored.
    if data:
        events.append((name, b"\n".join(data)))
    return events


async def iter_batches(response: Any) -> AsyncIterator[list[tuple[bytes, bytes]]]:
    """Lists of ``(event_name, data)``, one list per network read that completed any events.

    Handing over a whole list per read (instead of one event per ``yield``) saves an async
    generator hop per event, which is a large share of the per-delta cost.
    """
    buffer = b""
    first = True
    held_cr = False  # a chunk ended in "\r": it may be half of a "\r\n"
    async for chunk in response.aiter_bytes():
        if held_cr:
            chunk = b"\r" + chunk
            held_cr = False
        if b"\r" in chunk:
            if chunk.endswith(b"\r"):
                chunk = chunk[:-1]
                held_cr = True
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        buffer += chunk
        if first:
            if len(buffer) < 3:
                continue
            first = False
            if buffer.startswith(b"\xef\xbb\xbf"):
                buffer = buffer[3:]  # a byte-order mark before the first event
        if b"\n\n" not in buffer:
            continue
        blocks = buffer.split(b"\n\n")
        buffer = blocks.pop()
        batch: list[tuple[bytes, bytes]] = []
        for block in blocks:
            if block.startswith(_DATA) and b"\n" not in block:
                batch.append((b"", block[6:]))
            elif block:
                batch.extend(_parse_block(block))
        if batch:
            yield batch
    if buffer.strip():
        # A last event without its blank line: the spec drops it, but servers that close the
        # stream right after the last data line still meant it.
        yield _parse_block(buffer)


async def iter_events(response: Any) -> AsyncIterator[tuple[bytes, bytes]]:
    """``(event_name, data)`` for each event with data, one at a time."""
    async for batch in iter_batches(response):
        for event in batch:
            yield event
