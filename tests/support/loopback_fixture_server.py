"""A tiny OpenAI-compatible chat-completions server on 127.0.0.1 (streaming SSE only).

Used by the fixture script (to let pi 1.6.0 write real session files) and by the tests (to check
what history a resumed session sends). Answers are decided from the request:

* no ``tools`` in the request → a summary (compaction / branch summary requests);
* the last message is a tool result → an answer quoting it;
* the last user text contains ``use bash`` → a ``bash`` tool call running ``echo fixture-output``;
* otherwise → ``Answer <n>: <first 40 chars of the user text>``.

Every request body is kept in ``server.requests`` (parsed JSON).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _chunk(
    delta: dict[str, Any] | None, finish: str | None = None, usage: dict[str, int] | None = None
) -> bytes:
    body: dict[str, Any] = {
        "id": "chatcmpl-loopback",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "loop-1",
        "choices": [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage is not None:
        body["usage"] = usage
    return b"data: " + json.dumps(body).encode() + b"\n\n"


class LoopbackServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.answers = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                outer.requests.append(body)
                chunks = outer.respond(body)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                payload = b"".join(chunks) + b"data: [DONE]\n\n"
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> LoopbackServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def respond(self, body: dict[str, Any]) -> list[bytes]:
        messages = body.get("messages") or []
        last = messages[-1] if messages else {}
        usage = {
            "prompt_tokens": 50 + 10 * len(messages),
            "completion_tokens": 12,
            "total_tokens": 62 + 10 * len(messages),
        }
        if not body.get("tools"):
            text = "## Goal\nFixture summary of the earlier conversation.\n\n## Next Steps\n1. Continue."
            return [
                _chunk({"role": "assistant", "content": text}),
                _chunk({}, "stop"),
                _chunk(None, usage=usage),
            ]
        if last.get("role") == "tool":
            text = f"The command printed: {_text(last.get('content')).strip()}"
            return [
                _chunk({"role": "assistant", "content": text}),
                _chunk({}, "stop"),
                _chunk(None, usage=usage),
            ]
        user_text = _text(last.get("content"))
        if "use bash" in user_text:
            self.answers += 1
            call = {
                "index": 0,
                "id": f"call_loop{self.answers}",
                "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": "echo fixture-output"})},
            }
            return [
                _chunk({"role": "assistant", "content": None, "tool_calls": [call]}),
                _chunk({}, "tool_calls"),
                _chunk(None, usage=usage),
            ]
        self.answers += 1
        text = f"Answer {self.answers}: {user_text[:40]}"
        return [_chunk({"role": "assistant", "content": text}), _chunk({}, "stop"), _chunk(None, usage=usage)]


def models_json(base_url: str) -> dict[str, Any]:
    """A models.json declaring the loopback server as provider ``loop`` with model ``loop-1``."""
    return {
        "providers": {
            "loop": {
                "baseUrl": base_url,
                "api": "openai-completions",
                "apiKey": "unused",
                "models": [{"id": "loop-1", "name": "Loop 1", "contextWindow": 128000, "maxTokens": 4096}],
            }
        }
    }
