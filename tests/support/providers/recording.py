"""A loopback server that records every request (path, headers, body) and answers in the wire
format its path asks for: ``.../chat/completions`` (OpenAI SSE), ``.../responses`` (OpenAI's
Responses SSE), ``.../messages`` (Anthropic SSE) or ``.../token`` (an OAuth token endpoint
answering ``token_reply``)."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def form(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(self.body.decode()).items()}


def _openai(text: str) -> bytes:
    def chunk(delta: dict[str, Any] | None, finish: str | None = None, usage: Any = None) -> bytes:
        body: dict[str, Any] = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m"}
        body["choices"] = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
        if usage:
            body["usage"] = usage
        return b"data: " + json.dumps(body).encode() + b"\n\n"

    usage = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
    parts = [chunk({"role": "assistant", "content": text}), chunk({}, "stop"), chunk(None, usage=usage)]
    return b"".join(parts) + b"data: [DONE]\n\n"


def _anthropic(text: str) -> bytes:
    usage = {"input_tokens": 5, "output_tokens": 2}
    events = [
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
            "stop_reason": None, "usage": usage}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": text}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                           "usage": {"output_tokens": 2}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events)


def _responses(text: str) -> bytes:
    item = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    usage = {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}
    response = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": "m",
        "output": [item],
        "usage": usage,
    }
    events = [
        {"type": "response.created", "response": {**response, "status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {**item, "status": "in_progress", "content": []}},
        {"type": "response.content_part.added", "item_id": "msg_1", "output_index": 0,
         "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}},
        {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
         "content_index": 0, "delta": text},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": response},
    ]  # fmt: skip
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


class RecordingServer:
    def __init__(self, text: str = "loopback answer") -> None:
        self.requests: list[Request] = []
        self.token_reply: tuple[int, dict[str, Any]] = (400, {"error": "invalid_grant"})
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.requests.append(
                    Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                path = self.path.split("?", 1)[0]
                if path.endswith("/token"):
                    status, reply = outer.token_reply
                    payload, kind = json.dumps(reply).encode(), "application/json"
                else:
                    status, kind = 200, "text/event-stream"
                    if path.endswith("/messages"):
                        payload = _anthropic(text)
                    elif path.endswith("/responses"):
                        payload = _responses(text)
                    else:
                        payload = _openai(text)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> RecordingServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def chats(self) -> list[Request]:
        return [r for r in self.requests if not r.path.endswith("/token")]
