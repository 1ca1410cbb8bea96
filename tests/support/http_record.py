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
    """Serves ``handler`` on a free loopback port (``url``) until :meth:`close` or the end of a
    ``with`` block."""

    def serve(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
