"""Provider requests over asyncio streams and h11 (``pi_host.lib.llm.wire``), not httpx: one
connection kept alive across the turns of a run, a stale kept-alive connection replaced, bodies
in every HTTP/1.1 framing and in gzip, proxies from the environment still honoured (through
httpx), and failures described in httpx's words."""

from __future__ import annotations

import asyncio
import gzip

import pytest

from pi_host.lib.llm import wire
from pi_host.lib.llm.errors import describe_transport_error

# --- at the command line --------------------------------------------------------------------------


def test_can_send_leaves_proxies_and_odd_urls_to_httpx(monkeypatch):
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert wire.can_send("https://api.openai.com/v1")
    assert wire.can_send("http://[::1]:8080/v1")
    assert not wire.can_send("http://user:secret@example.com/v1")
    assert not wire.can_send("https://bücher.example/v1")
    assert not wire.can_send("ftp://example.com/")
    assert not wire.can_send("http://example.com:notaport/")
    monkeypatch.setenv("https_proxy", "http://proxy.test:3128")
    assert not wire.can_send("https://api.openai.com/v1")


# --- the transport against a raw asyncio server ---------------------------------------------------


class RawServer:
    """Answers each request with the next scripted bytes; counts connections and requests."""

    def __init__(self, answers: list[bytes | tuple[bytes, ...]], close_after_each: bool = False) -> None:
        self.answers = list(answers)
        self.close_after_each = close_after_each
        self.connections = 0
        self.requests: list[bytes] = []

    async def __aenter__(self) -> RawServer:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc) -> None:
        self.server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while self.answers:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length")
                    ),
                    0,
                )
                self.requests.append(head + await reader.readexactly(length))
                answer = self.answers.pop(0)
                for index, part in enumerate(answer if isinstance(answer, tuple) else (answer,)):
                    if index:
                        await asyncio.sleep(0.05)
                    writer.write(part)
                    await writer.drain()
                if self.close_after_each:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()


def chunked(*pieces: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"


SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"


async def body_of(pool: wire.Pool, url: str) -> tuple[wire.Response, bytes]:
    response = await pool.send("POST", url, {"x-test": "1"}, b"{}", connect_timeout=5, read_timeout=5)
    body = await response.aread()
    await response.aclose()
    return response, body


async def test_every_framing_and_gzip_decode_to_the_same_body():
    event = b"data: {}\n\n"
    answers = [
        SSE_HEAD + b"transfer-encoding: chunked\r\n\r\n" + chunked(event[:4], event[4:]),
        SSE_HEAD + b"content-length: %d\r\n\r\n" % len(event) + event,
        SSE_HEAD
        + b"content-encoding: gzip\r\ntransfer-encoding: chunked\r\n\r\n"
        + chunked(gzip.compress(event)),
        SSE_HEAD + b"connection: close\r\n\r\n" + event,  # the body ends when the connection does
    ]
    async with RawServer(answers) as server:
        pool = wire.Pool()
        bodies = [await body_of(pool, server.url + "/v1/chat") for _ in answers]
    assert [body for _, body in bodies] == [event] * 4
    assert server.connections == 1  # kept alive until the server said close
    assert bodies[0][0].headers.get("Content-Type") == "text/event-stream"
    first = server.requests[0].decode()
    assert first.startswith("POST /v1/chat HTTP/1.1\r\n")
    assert (
        f"host: {server.url[7:]}\r\n" in first and "x-test: 1\r\n" in first and first.endswith("\r\n\r\n{}")
    )


async def test_a_connection_the_server_closed_while_idle_is_replaced():
    answer = SSE_HEAD + b"content-length: 2\r\n\r\nok"
    async with RawServer([answer, answer], close_after_each=True) as server:
        pool = wire.Pool()
        first = await body_of(pool, server.url)
        await asyncio.sleep(0.05)  # the server has closed the kept connection by now
        second = await body_of(pool, server.url)
    assert first[1] == second[1] == b"ok"
    assert server.connections == 2


async def test_an_answer_left_before_its_end_keeps_its_connection_for_the_next():
    # adapters stop at their last event; the body's end comes a moment later
    head = SSE_HEAD + b"transfer-encoding: chunked\r\n\r\n"
    first = (head + b"5\r\n[END]\r\n", b"0\r\n\r\n")
    async with RawServer([first, SSE_HEAD + b"content-length: 2\r\n\r\nok"]) as server:
        pool = wire.Pool()
        response = await pool.send("POST", server.url, {}, b"", connect_timeout=5, read_timeout=5)
        async for piece in response.aiter_raw():
            assert piece == b"[END]"
            break
        await response.aclose()
        second = await body_of(pool, server.url)
    assert second[1] == b"ok"
    assert server.connections == 1


async def test_a_body_cut_short_is_a_lost_connection_in_httpx_words():
    answers = [SSE_HEAD + b"content-length: 100\r\nconnection: close\r\n\r\nonly this"]
    async with RawServer(answers, close_after_each=True) as server:
        pool = wire.Pool()
        response = await pool.send("POST", server.url, {}, b"", connect_timeout=5, read_timeout=5)
        with pytest.raises(wire.RemoteProtocolError) as caught:
            await response.aread()
    assert describe_transport_error(caught.value).startswith("Connection lost: peer closed connection")


async def test_a_silent_server_is_a_read_timeout():
    async def silent(reader, writer):
        await asyncio.sleep(2)
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        with pytest.raises(wire.ReadTimeout) as caught:
            await wire.Pool().send(
                "POST", f"http://127.0.0.1:{port}/", {}, b"", connect_timeout=5, read_timeout=0.2
            )
    finally:
        server.close()
    assert (
        describe_transport_error(caught.value)
        == "Request timed out: no data received from the provider (idle timeout)"
    )


async def test_lines_split_as_httpx_splits_them():
    pieces = [b"data: a\r", b"\ndata: b\n\nevent: x\rdata: \xc3", b"\xa9\n\ntail"]
    answers = [SSE_HEAD + b"transfer-encoding: chunked\r\n\r\n" + chunked(*pieces)]
    async with RawServer(answers) as server:
        response = await wire.Pool().send("GET", server.url, {}, b"", connect_timeout=5, read_timeout=5)
        lines = [line async for line in response.aiter_lines()]
        await response.aclose()
    assert lines == ["data: a", "data: b", "", "event: x", "data: é", "", "tail"]
