"""AWS event-stream framing (``application/vnd.amazon.eventstream``), the binary framing of
Bedrock's ConverseStream answer. Each message is

    total length (u32) | headers length (u32) | prelude CRC32 (u32)
    headers | payload | message CRC32 (u32)

big-endian, the prelude CRC over the first 8 bytes and the message CRC over everything before
it. A header is a name (u8 length + UTF-8), a type byte and a value; Bedrock sends strings
(type 7: u16 length + UTF-8), but every type the format defines is read so that no message is
misparsed. Bytes arrive in network-sized pieces: :class:`Decoder` buffers until a message is
whole.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from typing import Any

PRELUDE = 12
MAX_MESSAGE = 16 * 1024 * 1024  # the format's own limit; larger means we lost the framing


class FramingError(ValueError):
    pass


def _read_headers(data: bytes) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    pos = 0
    while pos < len(data):
        size = data[pos]
        name = data[pos + 1 : pos + 1 + size].decode("utf-8")
        pos += 1 + size
        kind = data[pos]
        pos += 1
        if kind in (0, 1):  # bool true / false
            value: Any = kind == 0
        elif kind == 2:
            value = struct.unpack_from(">b", data, pos)[0]
            pos += 1
        elif kind == 3:
            value = struct.unpack_from(">h", data, pos)[0]
            pos += 2
        elif kind == 4:
            value = struct.unpack_from(">i", data, pos)[0]
            pos += 4
        elif kind in (5, 8):  # int64, timestamp (ms)
            value = struct.unpack_from(">q", data, pos)[0]
            pos += 8
        elif kind in (6, 7):  # bytes, string
            length = struct.unpack_from(">H", data, pos)[0]
            raw = data[pos + 2 : pos + 2 + length]
            value = raw.decode("utf-8") if kind == 7 else raw
            pos += 2 + length
        elif kind == 9:
            value = str(uuid.UUID(bytes=data[pos : pos + 16]))
            pos += 16
        else:
            raise FramingError(f"event-stream header {name!r} has unknown type {kind}")
        headers[name] = value
    return headers


class Decoder:
    """Feed bytes, get whole messages as ``(headers, payload)``."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> list[tuple[dict[str, Any], bytes]]:
        self._buffer += chunk
        out: list[tuple[dict[str, Any], bytes]] = []
        buffer = self._buffer
        while len(buffer) >= PRELUDE:
            total, header_size, prelude_crc = struct.unpack_from(">III", buffer, 0)
            if zlib.crc32(bytes(buffer[:8])) != prelude_crc:
                raise FramingError("event-stream prelude checksum mismatch")
            if total < PRELUDE + 4 + header_size or total > MAX_MESSAGE:
                raise FramingError(f"event-stream message length {total} is invalid")
            if len(buffer) < total:
                break
            message = bytes(buffer[:total])
            del buffer[:total]
            (message_crc,) = struct.unpack_from(">I", message, total - 4)
            if zlib.crc32(message[:-4]) != message_crc:
                raise FramingError("event-stream message checksum mismatch")
            headers = _read_headers(message[PRELUDE : PRELUDE + header_size])
            out.append((headers, message[PRELUDE + header_size : -4]))
        return out

    @property
    def pending(self) -> int:
        """Bytes of an unfinished message (non-zero at the end of a stream means it was cut)."""
        return len(self._buffer)
