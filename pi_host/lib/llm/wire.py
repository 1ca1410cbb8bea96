"""Streaming HTTP/1.1 requests on asyncio streams and h11: how provider requests go by default.

Why not httpx here: httpx, httpcore and anyio cost about 90 ms of imports on every run that talks
to a provider, a fifth of a ``-p`` run, for features a streaming POST to a model API does not use.
h11 is the HTTP/1.1 state machine httpcore itself drives; this module adds the sockets, TLS (the
context of :mod:`pi_host.lib.llm.tls`), timeouts, response decoding and a keep-alive pool.

:func:`pi_host.lib.llm.http.open_sse` still uses httpx when a caller hands it an
``httpx.AsyncClient``, when a proxy is configured in the environment (:func:`can_send`), and for
URLs this module does not take (user info, non-ASCII hosts). Failures are this module's
:class:`TransportError` subclasses, named like httpx's and described in the same words by
:func:`pi_host.lib.llm.errors.describe_transport_error`.
"""

from __future__ import annotations

import asyncio
import os
import ssl
import weakref
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import h11

MAX_IDLE_PER_ORIGIN = 16
READ_SIZE = 65_536
DRAIN_S = 0.5
DRAIN_BYTES = 65_536
_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")
_DEFAULT_PORTS = {"http": 80, "https": 443}


class TransportError(Exception):
    """A request that failed below HTTP: nothing, or not all, of an answer arrived."""


class ConnectError(TransportError):
    """The connection (or its TLS handshake) could not be made."""


class ConnectTimeout(TransportError):
    """The connection took longer than the connect timeout."""


class ReadTimeout(TransportError):
    """No byte arrived within the read timeout (the headers, or the next piece of the body)."""


class WriteError(TransportError):
    """The request could not be sent."""


class ReadError(TransportError):
    """The connection failed while the answer was being read."""


class RemoteProtocolError(TransportError):
    """The server broke HTTP/1.1: an answer that does not parse, or a body cut short."""


def can_send(url: str) -> bool:
    """Whether this module sends to ``url``: http(s), an ASCII host without user info, and no
    proxy in the environment (httpx honours ``HTTP(S)_PROXY`` / ``ALL_PROXY``; it is used then)."""
    if any(os.environ.get(name) or os.environ.get(name.upper()) for name in _PROXY_VARIABLES):
        return False
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises on a port that is not a number)
    except ValueError:
        return False
    return (
        parts.scheme in _DEFAULT_PORTS
        and bool(parts.hostname)
        and parts.hostname.isascii()
        and "@" not in parts.netloc
    )


def _header_value(value: str) -> bytes:
    """ASCII as it is; anything else as UTF-8 (as httpx sends it) rather than an encoding error."""
    return value.encode("ascii") if value.isascii() else value.encode("utf-8")


class Headers(dict):
    """Response headers: lower-cased names, repeated ones joined with ``", "`` (as
    ``dict(httpx.Headers)`` gives them); :meth:`get` takes any case."""

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        return dict.get(self, name.lower(), default)

    def __getitem__(self, name: str) -> str:
        return dict.__getitem__(self, name.lower())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and dict.__contains__(self, name.lower())

    @classmethod
    def from_h11(cls, raw: list[tuple[bytes, bytes]]) -> Headers:
        headers = cls()
        for name, value in raw:
            key, text = name.decode("latin-1"), value.decode("latin-1")
            previous = dict.get(headers, key)
            dict.__setitem__(headers, key, text if previous is None else f"{previous}, {text}")
        return headers


class _Decoder:
    """``content-encoding`` gzip or deflate (the ones asked for); anything else passes through."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding.strip().lower()
        self._zlib: Any = None
        if self.encoding in ("gzip", "deflate"):  # zlib is imported only for a compressed body
            import zlib

            self._zlib = zlib.decompressobj(
                zlib.MAX_WBITS | 16 if self.encoding == "gzip" else zlib.MAX_WBITS
            )
        self._first = True

    def decode(self, data: bytes) -> bytes:
        if self._zlib is None:
            return data
        import zlib

        try:
            return self._zlib.decompress(data)
        except zlib.error as exc:
            if self.encoding == "deflate" and self._first:  # a raw deflate stream, no zlib header
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                self._first = False
                return self.decode(data)
            raise RemoteProtocolError(f"the {self.encoding} body does not decode: {exc}") from None
        finally:
            self._first = False

    def flush(self) -> bytes:
        return self._zlib.flush() if self._zlib is not None else b""


class _Connection:
    __slots__ = ("origin", "reader", "writer", "h11", "reused")

    def __init__(
        self, origin: tuple[str, str, int], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.origin = origin
        self.reader = reader
        self.writer = writer
        self.h11 = h11.Connection(h11.CLIENT)
        self.reused = False

    def usable(self) -> bool:
        return not self.reader.at_eof() and not self.writer.is_closing() and self.h11.our_state is h11.IDLE

    def close(self) -> None:
        transport = self.writer.transport
        if not transport.is_closing():
            transport.abort()  # no goodbye owed: a half-read answer is abandoned

    def buffered_event(self) -> Any:
        """The next event from bytes already received (``h11.NEED_DATA`` when there is none)."""
        try:
            return self.h11.next_event()
        except h11.RemoteProtocolError as exc:
            raise RemoteProtocolError(str(exc)) from None

    async def next_event(self, timeout: float | None) -> Any:
        while True:
            event = self.buffered_event()
            if event is not h11.NEED_DATA:
                return event
            try:
                if timeout is None:
                    data = await self.reader.read(READ_SIZE)
                else:
                    async with asyncio.timeout(timeout):
                        data = await self.reader.read(READ_SIZE)
            except TimeoutError:
                raise ReadTimeout("timed out waiting for the server") from None
            except OSError as exc:
                raise ReadError(str(exc) or type(exc).__name__) from None
            self.h11.receive_data(data)


class Response:
    """An answer whose body is read as it arrives (:meth:`aiter_bytes`); the attributes
    :func:`pi_host.lib.llm.http.open_sse` reads of an ``httpx.Response`` (and that
    ``httpx_sse.EventSource`` reads: ``headers``, :meth:`aiter_lines`)."""

    def __init__(
        self, connection: _Connection, event: h11.Response, timeout: float | None, pool: Pool
    ) -> None:
        self._connection: _Connection | None = connection
        self._timeout = timeout
        self._pool = pool
        self._finished = False
        self._broken = False
        self.status_code: int = event.status_code
        self.reason_phrase: str = event.reason.decode("latin-1")
        self.http_version = "HTTP/" + event.http_version.decode()
        self.headers = Headers.from_h11(event.headers)
        self.is_closed = False

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        """The body as sent, one piece per network read (every piece h11 frames from it joined)."""
        connection = self._connection
        if connection is None or self._finished:
            return
        try:
            event = await connection.next_event(self._timeout)
            while True:
                if type(event) is not h11.Data:
                    self._finish()  # EndOfMessage, or a body that ended with the connection
                    return
                data = event.data
                while type(event := connection.buffered_event()) is h11.Data:
                    data += event.data
                if event is not h11.NEED_DATA:
                    # the end arrived with this piece: the connection is free before the
                    # consumer, which may stop at its last event, hears of it
                    self._finish()
                    if data:
                        yield data
                    return
                if data:
                    yield data
                event = await connection.next_event(self._timeout)
        except (TransportError, asyncio.CancelledError):
            self._broken = True  # a timeout or an abort: nothing more is read from it
            raise

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body with its ``content-encoding`` undone."""
        encoding = self.headers.get("content-encoding")
        if not encoding or encoding.lower() == "identity":
            async for data in self.aiter_raw():
                yield data
            return
        decoder = _Decoder(encoding)
        async for data in self.aiter_raw():
            if decoded := decoder.decode(data):
                yield decoded
        if tail := decoder.flush():
            yield tail

    async def aiter_lines(self) -> AsyncIterator[str]:
        """Text lines without their endings, split as ``str.splitlines`` splits (as httpx's
        ``aiter_lines`` does), for ``httpx_sse.EventSource``."""
        import codecs

        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        pending = ""
        async for data in self.aiter_bytes():
            pending += decoder.decode(data)
            if not pending:
                continue
            lines = pending.splitlines(keepends=True)
            tail = lines[-1]
            # An unterminated last line, or one ending in "\r" (maybe half of "\r\n"), waits.
            pending = lines.pop() if tail.endswith("\r") or tail.splitlines()[0] == tail else ""
            for line in lines:
                yield line.splitlines()[0]
        pending += decoder.decode(b"", final=True)
        for line in pending.splitlines():
            yield line

    async def aread(self) -> bytes:
        return b"".join([data async for data in self.aiter_bytes()])

    def _finish(self) -> None:
        self._finished = True
        connection, self._connection = self._connection, None
        if connection is not None:
            self._pool.release(connection)

    async def aclose(self) -> None:
        """Give the connection back to the pool once the answer has ended, else close it.

        Adapters stop reading at their last event (``[DONE]``, ``message_stop``), usually a few
        bytes before the body's end: those are awaited in the background, briefly, so the next
        turn of the run reuses the connection instead of paying for a new one (and TLS)."""
        self.is_closed = True
        connection, self._connection = self._connection, None
        if connection is None or self._finished:
            return
        if self._broken:
            connection.close()
            return
        try:
            event = connection.buffered_event()
            while type(event) is h11.Data:
                event = connection.buffered_event()
        except RemoteProtocolError:
            event = None
        if event is h11.NEED_DATA:
            self._pool.drain_later(connection)
            return
        if type(event) is h11.EndOfMessage:
            self._finished = True
            self._pool.release(connection)
            return
        connection.close()

    @property
    def has_redirect_location(self) -> bool:
        return self.status_code in (301, 302, 303, 307, 308) and "location" in self.headers


class Pool:
    """Idle keep-alive connections of one event loop, per (scheme, host, port)."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self._tls = tls
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._draining: dict[tuple[str, str, int], set[asyncio.Task[None]]] = {}

    @property
    def tls_context(self) -> ssl.SSLContext:
        if self._tls is None:
            from pi_host.lib.llm.tls import client_tls_context

            self._tls = client_tls_context()
        return self._tls

    def release(self, connection: _Connection) -> None:
        """Keep a connection whose exchange ended cleanly (both sides done) for the next request,
        while there is room; close any other."""
        state = connection.h11
        if state.our_state is h11.DONE and state.their_state is h11.DONE:
            state.start_next_cycle()
        idle = self._idle.setdefault(connection.origin, [])
        if len(idle) < MAX_IDLE_PER_ORIGIN and connection.usable():
            connection.reused = True
            idle.append(connection)
        else:
            connection.close()

    def drain_later(self, connection: _Connection) -> None:
        """Read what is left of an answer nobody wants (up to :data:`DRAIN_BYTES` within
        :data:`DRAIN_S`), then keep the connection, or close it when the answer does not end."""
        task = asyncio.get_running_loop().create_task(self._drain(connection))
        tasks = self._draining.setdefault(connection.origin, set())
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    async def _drain(self, connection: _Connection) -> None:
        left = DRAIN_BYTES
        released = False
        try:
            async with asyncio.timeout(DRAIN_S):
                while left > 0:
                    event = await connection.next_event(None)
                    if type(event) is h11.Data:
                        left -= len(event.data)
                        continue
                    if type(event) is h11.EndOfMessage:
                        self.release(connection)
                        released = True
                    return
        except (TransportError, TimeoutError):
            pass
        finally:
            if not released:
                connection.close()

    def close(self) -> None:
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()

    async def _connect(self, origin: tuple[str, str, int], timeout: float | None) -> _Connection:
        scheme, host, port = origin
        if not self._idle.get(origin) and self._draining.get(origin):
            # the last answer's end is on its way: its connection is about to be free
            await asyncio.wait(list(self._draining[origin]), timeout=DRAIN_S)
        idle = self._idle.get(origin)
        while idle:
            connection = idle.pop()
            if connection.usable():
                return connection
            connection.close()
        tls = self.tls_context if scheme == "https" else None
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(
                    host, port, ssl=tls, server_hostname=host if tls else None, happy_eyeballs_delay=0.25
                )
        except TimeoutError:
            raise ConnectTimeout(f"no connection to {host}:{port} within {timeout:g}s") from None
        except ssl.SSLError as exc:  # the certificate checks, or the handshake
            raise ConnectError(str(exc) or type(exc).__name__) from None
        except OSError as exc:  # refused, unreachable, unknown host
            # asyncio words a refusal "Connect call failed (address)": say what happened instead
            text = f"{os.strerror(exc.errno)} ({host}:{port})" if exc.errno and exc.errno > 0 else str(exc)
            raise ConnectError(text or type(exc).__name__) from None
        return _Connection(origin, reader, writer)

    async def send(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        content: bytes,
        *,
        connect_timeout: float | None,
        read_timeout: float | None,
    ) -> Response:
        """Send one request; the answer comes back once its headers have. A reused connection
        that the server had closed meanwhile is replaced once, before anything was answered."""
        parts = urlsplit(url)
        scheme = parts.scheme
        host = parts.hostname or ""
        port = parts.port or _DEFAULT_PORTS[scheme]
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        authority = f"[{host}]" if ":" in host else host
        if parts.port and parts.port != _DEFAULT_PORTS[scheme]:
            authority = f"{authority}:{port}"
        names = {name.lower() for name in headers}
        wire_headers = [("host", authority)]
        for name, value in (
            ("accept", "*/*"),
            ("accept-encoding", "gzip, deflate"),
            ("connection", "keep-alive"),
        ):
            if name not in names:
                wire_headers.append((name, value))
        wire_headers += [
            (name, value) for name, value in headers.items() if name.lower() not in ("host", "content-length")
        ]
        if content or method not in ("GET", "HEAD"):
            wire_headers.append(("content-length", str(len(content))))
        request = h11.Request(
            method=method, target=target, headers=[(n, _header_value(v)) for n, v in wire_headers]
        )
        for attempt in (1, 2):
            connection = await self._connect((scheme, host, port), connect_timeout)
            try:
                return await self._exchange(connection, request, content, connect_timeout, read_timeout)
            except (ReadError, WriteError, RemoteProtocolError):
                connection.close()
                if not connection.reused or attempt == 2:
                    raise
            except BaseException:
                connection.close()
                raise
        raise AssertionError("unreachable")

    async def _exchange(
        self,
        connection: _Connection,
        request: h11.Request,
        content: bytes,
        write_timeout: float | None,
        read_timeout: float | None,
    ) -> Response:
        state = connection.h11
        try:
            connection.writer.write(
                state.send(request) + state.send(h11.Data(data=content)) + state.send(h11.EndOfMessage())
            )
            async with asyncio.timeout(write_timeout):
                await connection.writer.drain()
        except TimeoutError:
            raise WriteError("timed out sending the request") from None
        except OSError as exc:
            raise WriteError(str(exc) or type(exc).__name__) from None
        while True:
            event = await connection.next_event(read_timeout)
            if type(event) is h11.Response:
                return Response(connection, event, read_timeout, self)
            if type(event) is h11.ConnectionClosed:
                raise RemoteProtocolError("Server disconnected without sending a response.")
            # an informational (1xx) answer: the real one follows


_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Pool] = weakref.WeakKeyDictionary()


def shared_pool() -> Pool:
    """One pool per event loop (connections belong to the loop that opened them)."""
    loop = asyncio.get_running_loop()
    pool = _pools.get(loop)
    if pool is None:
        pool = _pools[loop] = Pool()
    return pool
