"""A fast server-sent-events reader for the per-delta hot path.

httpx-sse decodes each response through text decoding, a line splitter and a per-line decoder,
several async generators deep; for a 10,000-delta stream that alone costs about as much as
everything an adapter does with the events. :func:`iter_batches` works on the raw bytes instead:
it splits on blank lines with ``bytes.split`` (C speed), takes the usual one-``event:``-line /
one-``data:``-line event apart by slicing, and parses anything else line by line (several data
lines, ``id:``/``retry:`` fields, comments, ``\\r\\n`` or ``\\r`` line ends, a leading BOM).
Events are cut only at complete blank lines, so a UTF-8 sequence split across network reads is
whole again before anyone decodes it; ``data`` stays ``bytes`` (orjson parses bytes directly).

One list of events is handed over per network read, which saves an async-generator hop per event.

Every generator here closes the one it reads from when it is closed itself (``aclosing``): an
abandoned inner generator would otherwise be finalised later by the event loop, concurrently with
the response's own closing, which is how "aclose(): asynchronous generator is already running"
reaches stderr.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

Event = tuple[bytes, bytes]
"""``(event name or b"", data)``."""

_DATA = b"data: "


def parse_block(block: bytes) -> list[Event]:
    """The events in a block of ``\\n``-separated lines (normally exactly one)."""
    events: list[Event] = []
    name = b""
    data: list[bytes] = []
    for line in block.split(b"\n"):
        if not line:
            if data:
                events.append((name, b"\n".join(data)))
            name, data = b"", []
            continue
        if line[:1] == b":":
            continue  # comment / keep-alive
        field, sep, value = line.partition(b":")
        if sep and value[:1] == b" ":
            value = value[1:]
        if field == b"data":
            data.append(value)
        elif field == b"event":
            name = value
    if data:
        events.append((name, b"\n".join(data)))
    return events


def _fast(block: bytes) -> Event | None:
    """``data: X`` or ``event: N\\ndata: X`` without further lines; else None."""
    if block.startswith(b"data: "):
        return None if b"\n" in block else (b"", block[6:])
    if block.startswith(b"event: "):
        head, _, rest = block.partition(b"\n")
        if rest.startswith(b"data: ") and b"\n" not in rest:
            return head[7:], rest[6:]
    return None


async def iter_batches(response: Any) -> AsyncIterator[list[Event]]:
    """Lists of ``(event_name, data)``, one per network read that completed any events."""
    buffer = b""
    first = True
    held_cr = False  # a read ended in "\r", maybe half of "\r\n"
    async with aclosing(response.aiter_bytes()) as chunks:
        async for chunk in chunks:
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
                    buffer = buffer[3:]
            if b"\n\n" not in buffer:
                continue
            blocks = buffer.split(b"\n\n")
            buffer = blocks.pop()
            batch: list[Event] = []
            for block in blocks:
                if block[:6] == _DATA and b"\n" not in block:  # the usual case, inlined
                    batch.append((b"", block[6:]))
                    continue
                event = _fast(block)
                if event is not None:
                    batch.append(event)
                elif block:
                    batch.extend(parse_block(block))
            if batch:
                yield batch
    if held_cr:
        buffer += b"\n"
    if buffer.strip():
        tail = parse_block(buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n"))
        if tail:
            yield tail


async def iter_events(response: Any) -> AsyncIterator[Event]:
    """``(event_name, data)`` one at a time (simpler to consume; one generator hop per event)."""
    async with aclosing(iter_batches(response)) as batches:
        async for batch in batches:
            for event in batch:
                yield event
