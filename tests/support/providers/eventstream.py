"""Writing AWS event-stream messages (the framing of Bedrock's ConverseStream answers) for the
loopback Bedrock server: string headers only, as Bedrock sends them."""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any


def encode_message(headers: dict[str, str], payload: bytes) -> bytes:
    raw_headers = b""
    for name, value in headers.items():
        name_bytes, value_bytes = name.encode(), value.encode()
        raw_headers += (
            bytes([len(name_bytes)])
            + name_bytes
            + b"\x07"
            + struct.pack(">H", len(value_bytes))
            + value_bytes
        )
    total = 12 + len(raw_headers) + len(payload) + 4
    prelude = struct.pack(">II", total, len(raw_headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + raw_headers + payload
    return body + struct.pack(">I", zlib.crc32(body))


def event(event_type: str, data: dict[str, Any]) -> bytes:
    headers = {":event-type": event_type, ":content-type": "application/json", ":message-type": "event"}
    return encode_message(headers, json.dumps({**data, "p": "abcdefgh"}).encode())


def exception(kind: str, message: str) -> bytes:
    headers = {":exception-type": kind, ":content-type": "application/json", ":message-type": "exception"}
    return encode_message(headers, json.dumps({"message": message}).encode())


def converse_tool_call_stream() -> bytes:
    """A Claude answer on Bedrock: thinking with a signature, text, one tool call whose input
    arrives in pieces, ``tool_use`` and the usage metadata."""
    parts = [
        event("messageStart", {"role": "assistant"}),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Need the file."}}}),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "sig-part-1"}}}),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "Reading "}}),
        event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "main.py."}}),
        event("contentBlockStop", {"contentBlockIndex": 1}),
        event("contentBlockStart", {"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "tooluse_abc123", "name": "read"}}}),
        event("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"toolUse": {"input": '{"path": "ma'}}}),
        event("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"toolUse": {"input": 'in.py"}'}}}),
        event("contentBlockStop", {"contentBlockIndex": 2}),
        event("messageStop", {"stopReason": "tool_use"}),
        event(
            "metadata",
            {
                "usage": {"inputTokens": 120, "outputTokens": 40, "totalTokens": 160, "cacheReadInputTokens": 10, "cacheWriteInputTokens": 5},
                "metrics": {"latencyMs": 321},
            },
        ),
    ]  # fmt: skip
    return b"".join(parts)


def converse_text_stream(text: str) -> bytes:
    """A plain answer: one text block, ``end_turn``, usage."""
    return b"".join(
        [
            event("messageStart", {"role": "assistant"}),
            event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": text}}),
            event("contentBlockStop", {"contentBlockIndex": 0}),
            event("messageStop", {"stopReason": "end_turn"}),
            event("metadata", {"usage": {"inputTokens": 200, "outputTokens": 8, "totalTokens": 208}}),
        ]
    )
