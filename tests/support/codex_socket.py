"""The Codex backend's WebSocket for the loopback server (tests/support/oauth_server.py): an
upgrade of ``GET /codex/responses`` accepted by hand (RFC 6455's accept key), then frames
through ``websockets``' sans-IO protocol on the handler's thread. Each ``response.create``
message is recorded with the number of its connection and answered with the events a
:class:`SocketScript` gives for it, one text frame each, as the backend streams them."""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def answer_events(n: int, *, tool_call: bool, text: str = "Reading it.") -> list[dict[str, Any]]:
    """Response ``resp_<n>``: a text, then (``tool_call``) a call of ``read`` on ``a.txt``,
    ended by ``response.done``."""
    rid, msg, fc = f"resp_{n}", f"msg_{n}", f"fc_{n}"
    events = [
        {"type": "response.created", "response": {"id": rid, "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"type": "message", "id": msg, "role": "assistant", "content": []}},
        {"type": "response.output_text.delta", "output_index": 0, "item_id": msg, "delta": text},
        {"type": "response.output_item.done", "output_index": 0, "item": {
            "type": "message", "id": msg, "role": "assistant",
            "content": [{"type": "output_text", "text": text}]}},
    ]  # fmt: skip
    if tool_call:
        arguments = '{"path":"a.txt"}'
        events += [
            {"type": "response.output_item.added", "output_index": 1, "item": {
                "type": "function_call", "id": fc, "call_id": f"call_{n}", "name": "read", "arguments": ""}},
            {"type": "response.function_call_arguments.delta", "output_index": 1, "item_id": fc,
             "delta": arguments},
            {"type": "response.output_item.done", "output_index": 1, "item": {
                "type": "function_call", "id": fc, "call_id": f"call_{n}", "name": "read",
                "arguments": arguments}},
        ]  # fmt: skip
    events.append({"type": "response.done", "response": {"id": rid, "status": "completed",
                   "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}})  # fmt: skip
    return events


def tool_call_then_text(message: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """The default script: the first answer calls ``read``, every later one is text only."""
    return answer_events(n, tool_call=n == 1, text="Reading it." if n == 1 else "Done reading.")


@dataclass
class SocketScript:
    """What the socket answers: ``answer(message, n)`` (n counts messages from 1) gives the
    events; a message is recorded as ``(connection number, message)``."""

    answer: Callable[[dict[str, Any], int], list[dict[str, Any]]] = tool_call_then_text
    accept: bool = True  # False: upgrades are refused (HTTP 426), only SSE requests are answered
    messages: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    connections: itertools.count = field(default_factory=lambda: itertools.count(1))
    lock: threading.Lock = field(default_factory=threading.Lock)

    def serve(self, handler: Any) -> None:
        """Accept the upgrade on ``handler`` (a BaseHTTPRequestHandler whose request line and
        headers are read) and answer messages until the client closes."""
        from websockets.frames import Opcode
        from websockets.protocol import Protocol, Side, State

        if not self.accept:
            handler.send_response(426)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        key = handler.headers["Sec-WebSocket-Key"]
        accept = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
        handler.send_response(101)
        handler.send_header("Upgrade", "websocket")
        handler.send_header("Connection", "Upgrade")
        handler.send_header("Sec-WebSocket-Accept", accept)
        handler.end_headers()
        handler.wfile.flush()
        handler.close_connection = True
        with self.lock:
            number = next(self.connections)
        protocol = Protocol(Side.SERVER, state=State.OPEN, max_size=None)
        sock = handler.connection
        while protocol.state is not State.CLOSED:
            try:
                data = handler.rfile.read1(65536)
            except OSError:
                return
            if not data:
                protocol.receive_eof()
            else:
                protocol.receive_data(data)
            for frame in protocol.events_received():
                if frame.opcode is Opcode.TEXT:
                    message = json.loads(frame.data)
                    with self.lock:
                        self.messages.append((number, message))
                        n = len(self.messages)
                    for event in self.answer(message, n):
                        protocol.send_text(json.dumps(event).encode())
            pending = protocol.data_to_send()
            try:
                if any(pending):
                    sock.sendall(b"".join(pending))
                if b"" in pending:  # the closing handshake is done: the server ends the TCP stream
                    sock.shutdown(socket.SHUT_WR)
                    return
            except OSError:
                return
            if not data:
                return

    def sse(self, seen: Any) -> bytes:
        """An SSE request's answer from the same script (recorded with connection number 0)."""
        with self.lock:
            self.messages.append((0, seen.json()))
            n = len(self.messages)
        events = self.answer(seen.json(), n)
        return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)
