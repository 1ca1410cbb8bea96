"""What the loopback servers of the tests share: a request as it was seen, reading one from a
``BaseHTTPRequestHandler``, writing an answer, and serving on a loopback port in a thread."""

from __future__ import annotations

import json
import threading
import urllib.parse
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes

    def form(self) -> dict[str, str]:
        return {k: v[0] for k, v in urllib.parse.parse_qs(self.body.decode()).items()}

    def json(self) -> Any:
        if self.headers.get("content-encoding") == "zstd":  # pi's and pi-host's Codex SSE bodies
            import zstandard

            return json.loads(zstandard.ZstdDecompressor().decompressobj().decompress(self.body))
        return json.loads(self.body)


def read_request(handler: BaseHTTPRequestHandler, method: str) -> Seen:
    body = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
    url = urllib.parse.urlsplit(handler.path)
    query = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
    return Seen(method, url.path, query, {k.lower(): v for k, v in handler.headers.items()}, body)


def send_answer(
    handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str], payload: bytes
) -> None:
    handler.send_response(status)
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(payload)))
    handler.end_headers()
    handler.wfile.write(payload)


class Served:
    r"""Serves on a free loopback port (``url``) until :meth:`close` or the end of a ``with``
    block: each request is :meth:`handle`\ d, by default kept in ``requests`` and answered with
    ``answer(seen) -> (status, headers, payload)``."""

    requests: list[Seen]

    def answer(self, seen: Seen) -> tuple[int, dict[str, str], bytes]:
        raise NotImplementedError

    def handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        seen = read_request(handler, method)
        self.requests.append(seen)
        send_answer(handler, *self.answer(seen))

    def serve(self) -> None:
        served = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                served.handle(self, "GET")

            def do_POST(self) -> None:  # noqa: N802
                served.handle(self, "POST")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
