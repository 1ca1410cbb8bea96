"""A real HTTP server on 127.0.0.1 that replays recorded vendor byte streams.

Tests queue :class:`Reply` objects; each incoming request takes the next one (optionally per
path) and is recorded (method, path, headers, raw body, parsed JSON). The server writes raw
bytes on a plain socket, so a test controls exactly how the stream is cut: split UTF-8 sequences,
keep-alive comments, pauses, a stall, or a connection dropped mid-body.

A reply's ``parts`` is a list of:

* ``bytes``       written as one chunk (one HTTP chunk with chunked encoding, then flushed)
* ``float``       a pause of that many seconds
* ``DROP``        close the socket abruptly (mid-body: the client sees an incomplete message)
* ``STALL``       stop sending but keep the connection open until the server stops

A reply's ``before`` (a pause in seconds, or ``STALL``) comes before the status line: a server
that accepts the request and never answers. :meth:`Reply.redirect` answers with a ``Location``.

Fixture files (``fixtures/*.sse``) are raw SSE text; :meth:`Reply.from_fixture` cuts them into
chunks of ``chunk_size`` bytes, deliberately ignoring UTF-8 and event boundaries.
"""

from __future__ import annotations

import json
import socket
import socketserver
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.paths import PROVIDER_FIXTURES

FIXTURES = PROVIDER_FIXTURES

DROP = object()
STALL = object()


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    parts: list[Any] = field(default_factory=list)
    chunked: bool = True
    before: Any = None
    """A pause (seconds) or ``STALL`` before the status line is sent."""

    @classmethod
    def sse(cls, data: bytes | str, chunk_size: int | None = None, **kwargs: Any) -> Reply:
        raw = data.encode() if isinstance(data, str) else data
        if chunk_size:
            parts: list[Any] = [raw[i : i + chunk_size] for i in range(0, len(raw), chunk_size)]
        else:
            parts = [raw]
        return cls(parts=parts, **kwargs)

    @classmethod
    def from_fixture(cls, name: str, chunk_size: int | None = None, **kwargs: Any) -> Reply:
        return cls.sse((FIXTURES / name).read_bytes(), chunk_size=chunk_size, **kwargs)

    @classmethod
    def json(cls, status: int, body: Any, headers: dict[str, str] | None = None) -> Reply:
        raw = body if isinstance(body, (bytes, str)) else json.dumps(body)
        raw = raw.encode() if isinstance(raw, str) else raw
        return cls(
            status=status,
            headers={"content-type": "application/json", **(headers or {})},
            parts=[raw] if raw else [],
            chunked=False,
        )

    @classmethod
    def redirect(cls, location: str, status: int = 307) -> Reply:
        return cls(status=status, headers={"location": location}, parts=[], chunked=False)


def sse_events(events: list[tuple[str | None, Any]]) -> str:
    """Render ``[(event_name, data)]`` as SSE text (dict data is JSON-encoded)."""
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        lines = f"event: {name}\n" if name else ""
        out.append(f"{lines}data: {text}\n\n")
    return "".join(out)


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(10)
        reader = sock.makefile("rb")
        while True:  # keep-alive: several requests per connection
            line = reader.readline()
            if not line:
                return
            method, path, _ = line.decode("latin-1").split(" ", 2)
            headers: dict[str, str] = {}
            while True:
                header = reader.readline().decode("latin-1")
                if header in ("\r\n", "\n", ""):
                    break
                name, _, value = header.partition(":")
                headers[name.strip().lower()] = value.strip()
            length = int(headers.get("content-length") or 0)
            body = reader.read(length) if length else b""
            owner = self.server.owner
            owner.requests.append(Recorded(method, path, headers, body))
            reply = owner.take(path)
            if not self._send(sock, reply):
                return

    def _send(self, sock: socket.socket, reply: Reply) -> bool:
        if reply.before is STALL:
            self.server.owner.stopping.wait()
            return False
        if isinstance(reply.before, (int, float)):
            time.sleep(reply.before)
        head = [f"HTTP/1.1 {reply.status} X"]
        head += [f"{k}: {v}" for k, v in reply.headers.items()]
        if reply.chunked:
            head.append("transfer-encoding: chunked")
        else:
            size = sum(len(p) for p in reply.parts if isinstance(p, bytes))
            head.append(f"content-length: {size}")
        try:
            sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
            for part in reply.parts:
                if isinstance(part, (int, float)) and not isinstance(part, bool):
                    time.sleep(part)
                elif part is DROP:
                    sock.shutdown(socket.SHUT_RDWR)
                    sock.close()
                    return False
                elif part is STALL:
                    self.server.owner.stopping.wait()
                    return False
                elif reply.chunked:
                    if part:
                        sock.sendall(b"%x\r\n%s\r\n" % (len(part), part))
                else:
                    sock.sendall(part)
            if reply.chunked:
                sock.sendall(b"0\r\n\r\n")
        except OSError:
            return False
        return True


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: SSEServer

    def handle_error(self, request, client_address) -> None:
        pass  # clients that hang up early (aborts, timeouts) are part of the tests


class SSEServer:
    """Start with :meth:`start` (or as a context manager); ``url`` is ``http://127.0.0.1:<port>``."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._queue: deque[Reply] = deque()
        self._by_path: dict[str, deque[Reply]] = {}
        self._lock = threading.Lock()
        self.stopping = threading.Event()
        self._server: _Server | None = None
        self.default: Reply | None = None
        """Served when the queue is empty (else a 500 with a JSON error)."""

    def start(self) -> SSEServer:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> SSEServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def enqueue(self, *replies: Reply, path: str | None = None) -> None:
        with self._lock:
            target = self._queue if path is None else self._by_path.setdefault(path, deque())
            target.extend(replies)

    def take(self, path: str) -> Reply:
        with self._lock:
            bare = path.split("?", 1)[0]
            queue = self._by_path.get(bare)
            if queue:
                return queue.popleft()
            if self._queue:
                return self._queue.popleft()
        if self.default is not None:
            return self.default
        return Reply.json(500, {"error": {"type": "test_server", "message": "no reply queued"}})

    @property
    def last(self) -> Recorded:
        return self.requests[-1]


def main(argv: list[str] | None = None) -> int:
    """``python sse_server.py [--chunk N] FILE...``: serve the files (raw SSE) in order, one per
    request, printing each request body to stderr; the URL is the first line on stdout."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--chunk", type=int, default=None, help="cut each stream into chunks of N bytes")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args(argv)
    server = SSEServer().start()
    for name in args.files:
        server.enqueue(Reply.sse(Path(name).read_bytes(), chunk_size=args.chunk))
    print(server.url, flush=True)
    seen = 0
    try:
        while seen < len(args.files):
            time.sleep(0.05)
            while seen < len(server.requests):
                print(
                    f"--- request {seen + 1}: {server.requests[seen].method} {server.requests[seen].path}",
                    file=sys.stderr,
                )
                print(server.requests[seen].body.decode(errors="replace"), file=sys.stderr, flush=True)
                seen += 1
        time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
