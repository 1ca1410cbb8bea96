"""A scripted OpenAI chat-completions server on 127.0.0.1 for end-to-end runs of pi and pi-host.

    with LoopbackServer([Reply("hello"), Reply.slow(2000)]) as server:
        write_models_json(agent_dir, server.url)      # provider "loop", model "loop-1"
        ...                                            # run `pi --model loop/loop-1`
        server.requests[0]["messages"]                 # what the client sent

Each ``POST .../chat/completions`` takes the next :class:`Reply` of the script (``"ok"`` once the
script is used up) and streams it the way api.openai.com does with ``"stream": true``: HTTP/1.1
chunked ``text/event-stream``, one ``data: {chat.completion.chunk}\\n\\n`` event per piece (a
first chunk with ``role``, content deltas, tool-call deltas with the id and name first and then
argument fragments, a chunk with ``finish_reason``, a usage chunk with empty ``choices`` when
``stream_options.include_usage`` is asked for (both pi and pi-host ask), then ``data: [DONE]``.

Between chunks the server checks whether the client hung up (socket readable with EOF, or a
failed write) and then stops streaming: the exchange is recorded as ``aborted``. Every request
body is kept (``requests``, parsed JSON, in arrival order) and, with ``jsonl=``, appended to a
JSONL file, one body per line; ``exchanges`` has the details (path, headers, status, chunks sent,
times). ``GET .../models`` lists ``loop-1``.

Run as a script to serve replies by hand: ``python -m tests.support.loopback --slow 2000``
prints the base URL and logs requests on stderr.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "loop-1"
PROVIDER = "loop"
PRINT = ("--model", f"{PROVIDER}/{MODEL}", "--no-session", "-p")
"""The arguments of a ``pi -p`` run on the loopback model, without a session file (for ``run_pi``)."""

WORDS = (
    "the quick brown fox jumps over a lazy dog while seven wizards quietly judge boxing matches "
    "and every pixel of the terminal redraws itself in calm orderly rows of text"
).split()


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def arguments_json(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass
class Reply:
    """One scripted answer.

    ``text`` is streamed ``words_per_chunk`` words per content delta (whitespace kept with the
    word it follows), ``delay`` seconds before each chunk after the first; ``tool_calls`` follow
    the text (``finish_reason`` ``tool_calls``); ``reasoning`` is streamed first as
    ``reasoning_content`` deltas; ``before`` is a pause before the response starts; ``status`` other
    than 200 answers with an OpenAI-style JSON error instead of a stream.
    """

    text: str = "ok"
    tool_calls: list[ToolCall] = field(default_factory=list)
    delay: float = 0.0
    words_per_chunk: int = 1
    reasoning: str = ""
    before: float = 0.0
    status: int = 200
    error: str = "scripted error"
    usage: dict[str, int] | None = None

    @classmethod
    def slow(cls, words: int = 2000, delay: float = 0.005, words_per_chunk: int = 1, **kwargs: Any) -> Reply:
        """A long answer (``words`` words in lines of 12, one chunk every ``delay`` seconds)."""
        return cls(text=long_text(words), delay=delay, words_per_chunk=words_per_chunk, **kwargs)

    @classmethod
    def tool(cls, name: str, arguments: dict[str, Any] | str, text: str = "", **kwargs: Any) -> Reply:
        return cls(text=text, tool_calls=[ToolCall(name, arguments)], **kwargs)


def long_text(words: int, per_line: int = 12) -> str:
    """``words`` words of filler, numbered every line (``[3]`` starts line 3) so screens differ."""
    out: list[str] = []
    cycle = itertools.cycle(WORDS)
    for index in range(words):
        if index % per_line == 0:
            if index:
                out.append("\n\n" if index % (per_line * 5) == 0 else "\n")
            out.append(f"[{index // per_line + 1}] ")
        else:
            out.append(" ")
        out.append(next(cycle))
    return "".join(out)


def _pieces(text: str, per_chunk: int) -> list[str]:
    """``text`` cut after every ``per_chunk`` words; the pieces join back to ``text`` exactly."""
    if not text:
        return []
    pieces, current, words, in_word = [], [], 0, False
    for char in text:
        if char.isspace():
            if in_word:
                words += 1
                in_word = False
                if words == per_chunk:
                    pieces.append("".join(current))
                    current, words = [], 0
        else:
            in_word = True
        current.append(char)
    if current:
        pieces.append("".join(current))
    return pieces


@dataclass
class Exchange:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    reply: Reply | None = None
    status: str = "streaming"
    """``streaming``, ``done`` or ``aborted`` (the client hung up before the end)."""
    chunks_sent: int = 0
    started: float = field(default_factory=time.monotonic)
    first_chunk: float | None = None
    finished: float | None = None


class _Aborted(Exception):
    pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients hanging up (aborts, a killed pi) are expected


class LoopbackServer:
    """Start with :meth:`start` or as a context manager; :attr:`url` is ``http://127.0.0.1:<port>/v1``."""

    def __init__(
        self, script: Iterable[Reply | str] = (), jsonl: str | os.PathLike[str] | None = None
    ) -> None:
        self._script: deque[Reply] = deque()
        self.add(*script)
        self.jsonl = os.fspath(jsonl) if jsonl is not None else None
        self.requests: list[Any] = []
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._ids = itertools.count(1)
        self.stopping = threading.Event()
        self.httpd = _Server(("127.0.0.1", 0), self._handler_class())
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._thread: threading.Thread | None = None

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self) -> LoopbackServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread = None
        self.httpd.server_close()

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # --- script ------------------------------------------------------------------------------

    def add(self, *replies: Reply | str) -> None:
        """Append replies to the script (a string is ``Reply(text)``)."""
        self._script.extend(Reply(r) if isinstance(r, str) else r for r in replies)

    def _next_reply(self) -> Reply:
        with self._lock:
            return self._script.popleft() if self._script else Reply("ok")

    # --- waiting -----------------------------------------------------------------------------

    def wait(self, predicate, timeout: float = 15, what: str = "condition") -> None:
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    states = [(e.path, e.status, e.chunks_sent) for e in self.exchanges]
                    raise AssertionError(f"loopback server: timed out waiting for {what}; exchanges {states}")
                self._changed.wait(left)

    def wait_requests(self, count: int, timeout: float = 15) -> None:
        """Until ``count`` chat requests arrived."""
        self.wait(lambda: len(self.requests) >= count, timeout, f"{count} requests")

    def wait_streaming(self, index: int | None = None, timeout: float = 15) -> Exchange:
        """Until chat exchange ``index`` (0-based arrival order; default: the latest one, or the
        first if none arrived yet) sent its first chunk; that exchange."""
        target = index if index is not None else max(len(self._chats()) - 1, 0)
        self.wait(
            lambda: len(self._chats()) > target and self._chats()[target].first_chunk is not None,
            timeout,
            f"exchange {target} to stream",
        )
        return self._chats()[target]

    def wait_finished(self, index: int = -1, timeout: float = 30) -> Exchange:
        """Until chat exchange ``index`` (default: the latest) is done or aborted; that exchange."""

        def finished() -> bool:
            chats = self._chats()
            return len(chats) > (index if index >= 0 else -index - 1) and chats[index].status != "streaming"

        self.wait(finished, timeout, f"exchange {index} to finish")
        return self._chats()[index]

    def _chats(self) -> list[Exchange]:
        return [e for e in self.exchanges if e.method == "POST"]

    def _notify(self) -> None:
        with self._changed:
            self._changed.notify_all()

    # --- HTTP --------------------------------------------------------------------------------

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server API)
                if self.path.rstrip("/").endswith("/models"):
                    owner._send_json(
                        self,
                        200,
                        {
                            "object": "list",
                            "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": PROVIDER}],
                        },
                    )
                else:
                    owner._send_json(
                        self, 404, {"error": {"message": "not found", "type": "invalid_request_error"}}
                    )

            def do_POST(self) -> None:  # noqa: N802
                owner._chat(self)

        return Handler

    def _send_json(self, handler: BaseHTTPRequestHandler, status: int, body: Any) -> None:
        raw = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(raw)))
        handler.end_headers()
        handler.wfile.write(raw)

    def _chat(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        exchange = Exchange("POST", handler.path, {k.lower(): v for k, v in handler.headers.items()}, body)
        with self._lock:
            self.requests.append(body)
            self.exchanges.append(exchange)
            if self.jsonl:
                with open(self.jsonl, "a", encoding="utf-8") as out:
                    out.write(json.dumps(body, ensure_ascii=False) + "\n")
        self._notify()
        reply = exchange.reply = self._next_reply()
        try:
            if reply.before:
                self._pause(handler, reply.before)
            if reply.status != 200:
                error = {
                    "error": {"message": reply.error, "type": "server_error", "param": None, "code": None}
                }
                self._send_json(handler, reply.status, error)
                exchange.status = "done"
                return
            handler.send_response(200)
            handler.send_header("Content-Type", "text/event-stream; charset=utf-8")
            handler.send_header("Cache-Control", "no-cache")
            handler.send_header("Transfer-Encoding", "chunked")
            handler.end_headers()
            handler.wfile.flush()
            include_usage = isinstance(body, dict) and bool(
                (body.get("stream_options") or {}).get("include_usage")
            )
            for index, event in enumerate(self._events(reply, body, include_usage)):
                if index and reply.delay:
                    self._pause(handler, reply.delay)
                elif self._hung_up(handler):
                    raise _Aborted
                data = b"data: " + event + b"\n\n"
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                handler.wfile.flush()
                exchange.chunks_sent += 1
                if exchange.first_chunk is None:
                    exchange.first_chunk = time.monotonic()
                    self._notify()
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
            exchange.status = "done"
        except (_Aborted, OSError):
            exchange.status = "aborted"
            handler.close_connection = True
        finally:
            exchange.finished = time.monotonic()
            self._notify()

    def _pause(self, handler: BaseHTTPRequestHandler, seconds: float) -> None:
        """Sleep ``seconds``, returning early (by raising) if the client hangs up meanwhile."""
        deadline = time.monotonic() + seconds
        sock: socket.socket = handler.connection
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            readable, _, _ = select.select([sock], [], [], min(left, 0.05))
            if self.stopping.is_set() or readable and self._hung_up(handler):
                raise _Aborted
            if readable:  # unexpected bytes from the client: not a hang-up, do not spin
                time.sleep(min(left, 0.002))

    @staticmethod
    def _hung_up(handler: BaseHTTPRequestHandler) -> bool:
        sock: socket.socket = handler.connection
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        try:
            return sock.recv(1, socket.MSG_PEEK) == b""
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True

    def _events(self, reply: Reply, body: Any, include_usage: bool) -> Iterator[bytes]:
        number = next(self._ids)
        base = {
            "id": f"chatcmpl-loop{number:06d}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": MODEL,
            "system_fingerprint": "fp_loopback",
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            event: dict[str, Any] = {
                **base,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            }
            if include_usage:
                event["usage"] = None
            return json.dumps(event, ensure_ascii=False).encode()

        yield chunk({"role": "assistant", "content": "", "refusal": None})
        for piece in _pieces(reply.reasoning, reply.words_per_chunk):
            yield chunk({"reasoning_content": piece})
        for piece in _pieces(reply.text, reply.words_per_chunk):
            yield chunk({"content": piece})
        for position, call in enumerate(reply.tool_calls):
            call_id = call.id or f"call_loop{number:03d}{position:03d}"
            yield chunk(
                {
                    "tool_calls": [
                        {
                            "index": position,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": ""},
                        }
                    ]
                }
            )
            arguments = call.arguments_json()
            for start in range(0, len(arguments), 16):
                yield chunk(
                    {
                        "tool_calls": [
                            {"index": position, "function": {"arguments": arguments[start : start + 16]}}
                        ]
                    }
                )
        yield chunk({}, "tool_calls" if reply.tool_calls else "stop")
        if include_usage:
            usage = reply.usage or _usage(body, reply)
            yield json.dumps({**base, "choices": [], "usage": usage}).encode()
        yield b"[DONE]"


def _usage(body: Any, reply: Reply) -> dict[str, Any]:
    """Rough token counts (4 characters a token) in OpenAI's usage shape."""
    prompt = len(json.dumps((body or {}).get("messages", []) if isinstance(body, dict) else body)) // 4
    completion = (
        len(reply.text) + len(reply.reasoning) + sum(len(c.arguments_json()) for c in reply.tool_calls)
    ) // 4 + 1
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": len(reply.reasoning) // 4,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def write_models_json(
    agent_dir: str | os.PathLike[str], server_url: str, context_window: int = 128_000
) -> str:
    """Write ``<agent_dir>/models.json`` with provider ``loop`` (``openai-completions`` at
    ``server_url``, ``/v1`` added when missing) and model ``loop-1``; read the same way by pi
    1.6.0 and pi-host. Returns the file's path."""
    base = server_url.rstrip("/")
    if not base.endswith("/v1"):
        base += "/v1"
    config = {
        "providers": {
            PROVIDER: {
                "baseUrl": base,
                "api": "openai-completions",
                "apiKey": "unused",
                "models": [
                    {
                        "id": MODEL,
                        "name": "Loopback 1",
                        "reasoning": False,
                        "input": ["text"],
                        "contextWindow": context_window,
                        "maxTokens": 4096,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                    }
                ],
            }
        }
    }
    os.makedirs(agent_dir, exist_ok=True)
    path = os.path.join(os.fspath(agent_dir), "models.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(config, handle, indent=2)
    return path


def main(argv: list[str] | None = None) -> int:
    """Serve a script by hand: ``--slow N`` first answers with N words, then ``--text`` replies."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--slow", type=int, default=0, help="first reply: N words, one every --delay s")
    parser.add_argument("--delay", type=float, default=0.005)
    parser.add_argument("--text", action="append", default=[], help="a reply (repeatable)")
    parser.add_argument("--jsonl", help="append request bodies to this file")
    parser.add_argument("--agent-dir", help="also write <dir>/models.json for this server")
    args = parser.parse_args(argv)
    script: list[Reply | str] = [Reply.slow(args.slow, args.delay)] if args.slow else []
    script += args.text
    with LoopbackServer(script, jsonl=args.jsonl) as server:
        if args.agent_dir:
            write_models_json(args.agent_dir, server.url)
        print(server.url, flush=True)
        seen = 0
        try:
            while True:
                time.sleep(0.1)
                for exchange in server.exchanges[seen:]:
                    if exchange.status != "streaming":
                        print(
                            f"{exchange.method} {exchange.path}: {exchange.status}, {exchange.chunks_sent} chunks",
                            file=sys.stderr,
                        )
                        seen += 1
                    else:
                        break
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
