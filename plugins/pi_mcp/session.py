"""pi-host's own MCP client session for stdio servers: JSON-RPC 2.0 over the server's pipes.

The SDK's ``ClientSession`` costs about a second of CPU to import (its protocol types are some
hundreds of pydantic models), paid by every run that configures a server. A client needs little
of it: the ``initialize`` handshake, requests matched to answers by id with a timeout, server
notifications handed on, and a polite answer to the requests a server may send (``ping``; the
rest are refused as unsupported, as the SDK refuses them when no callback is given). Streamable
HTTP servers (and their OAuth) still go through the SDK.

Answers are :class:`Record` views of the JSON, read as the SDK's result models are read
(``page.tools``, ``tool.input_schema``, ``result.is_error``, ``item.model_dump()``), so the
connection and the tools built on it do not care which session they got.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The protocol revisions reached through ``initialize`` (the newest is offered)."""
CLIENT_INFO = {"name": "pi-host", "version": "1"}
REQUEST_TIMEOUT = -32001
METHOD_NOT_FOUND = -32601
CONNECTION_CLOSED = -32000


class RpcError(Exception):
    """An error answer (or a timeout, or the end of the connection); ``str()`` is its message,
    as the SDK's ``MCPError`` reads."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def _snake_to_camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _wrap(value: Any) -> Any:
    if isinstance(value, dict):
        return Record(value)
    if isinstance(value, list):
        return [_wrap(item) for item in value]
    return value


def _without_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(item) for item in value]
    return value


PLAIN_FIELDS = frozenset(
    {"inputSchema", "outputSchema", "structuredContent", "_meta", "experimental", "arguments"}
)
"""Fields the SDK keeps as plain JSON (schemas, structured results, metadata): not wrapped."""


class Record:
    """A JSON object read like an SDK model: ``record.input_schema`` is ``"inputSchema"``, nested
    objects are records too (the :data:`PLAIN_FIELDS` stay dicts, as in the SDK), a field the
    server left out is None. ``dict(record)`` is the JSON object itself."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy, pickle and friends probe for these
            raise AttributeError(name)
        data = self._data
        key = _snake_to_camel(name)
        if key not in data:
            key = name
        value = data.get(key)
        return value if key in PLAIN_FIELDS else _wrap(value)

    def keys(self) -> Any:
        return self._data.keys()

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def model_dump(self, *, exclude_none: bool = False, **_options: Any) -> dict[str, Any]:
        """The JSON as the server sent it (camelCase names)."""
        return _without_none(self._data) if exclude_none else dict(self._data)

    def __repr__(self) -> str:
        return f"Record({self._data!r})"


def is_jsonrpc(message: Any) -> bool:
    """A JSON-RPC 2.0 request, notification or answer (anything else a server writes is junk)."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return False
    if "method" in message:
        return isinstance(message["method"], str)
    if "id" not in message:
        return False
    error = message.get("error")
    return "result" in message or (isinstance(error, dict) and "code" in error and "message" in error)


class StdioSession:
    """The client side of one connection. Use ``async with`` (it reads answers meanwhile)."""

    def __init__(
        self,
        read: Any,
        write: Any,
        timeout: float | None,
        on_notification: Callable[[Record], Awaitable[None]] | None = None,
    ) -> None:
        self._read, self._write = read, write
        self._timeout = timeout
        self._on_notification = on_notification
        self._next_id = 0
        self._waiting: dict[int, Any] = {}  # id -> anyio memory stream of one answer
        self._closed = False
        self._group: Any = None

    async def __aenter__(self) -> StdioSession:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(self._receive)
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        self._group.cancel_scope.cancel()
        return await self._group.__aexit__(*exc)

    # --- the wire ---------------------------------------------------------------------------

    async def _receive(self) -> None:
        try:
            async for message in self._read:
                if "method" in message:
                    await self._incoming(message)
                    continue
                waiting = (
                    self._waiting.pop(message.get("id"), None) if isinstance(message.get("id"), int) else None
                )
                if waiting is not None:
                    with contextlib.suppress(anyio.BrokenResourceError, anyio.WouldBlock):
                        waiting.send_nowait(message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass
        finally:
            self._closed = True
            for waiting in self._waiting.values():
                with contextlib.suppress(anyio.BrokenResourceError, anyio.WouldBlock):
                    waiting.send_nowait(None)
            self._waiting.clear()

    async def _incoming(self, message: dict[str, Any]) -> None:
        if "id" not in message:  # a notification
            if self._on_notification is not None:
                await self._on_notification(Record(message))
            return
        if message["method"] == "ping":
            await self._send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
            return
        error = {"code": METHOD_NOT_FOUND, "message": f"{message['method']} is not supported by this client"}
        await self._send({"jsonrpc": "2.0", "id": message["id"], "error": error})

    async def _send(self, message: dict[str, Any]) -> None:
        try:
            await self._write.send(message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            raise RpcError(CONNECTION_CLOSED, "Connection closed") from exc

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._send(message)

    async def request(
        self, method: str, params: dict[str, Any] | None = None, timeout: float | None = None
    ) -> Any:
        """The answer's ``result`` as a :class:`Record`; :class:`RpcError` for an error answer, a
        timeout (the server is told the request is cancelled) or a connection that ended."""
        if self._closed:
            raise RpcError(CONNECTION_CLOSED, "Connection closed")
        self._next_id += 1
        ident = self._next_id
        send, receive = anyio.create_memory_object_stream[Any](1)
        self._waiting[ident] = send
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not None:
            message["params"] = params
        wait = timeout if timeout is not None else self._timeout
        try:
            await self._send(message)
            with anyio.move_on_after(wait) as scope:
                answer = await receive.receive()
        finally:
            self._waiting.pop(ident, None)
            send.close()
            receive.close()
        if scope.cancelled_caught:
            with contextlib.suppress(RpcError):
                await self.notify("notifications/cancelled", {"requestId": ident, "reason": "timed out"})
            raise RpcError(REQUEST_TIMEOUT, f"Request {method!r} timed out")
        if answer is None:
            raise RpcError(CONNECTION_CLOSED, "Connection closed")
        if "error" in answer:
            error = answer["error"]
            raise RpcError(int(error.get("code", 0)), str(error.get("message", "")), error.get("data"))
        result = answer.get("result")
        return Record(result if isinstance(result, dict) else {})

    # --- MCP ---------------------------------------------------------------------------------

    async def initialize(self) -> Record:
        params = {"protocolVersion": HANDSHAKE_VERSIONS[-1], "capabilities": {}, "clientInfo": CLIENT_INFO}
        result = await self.request("initialize", params)
        version = result.protocol_version
        if version not in HANDSHAKE_VERSIONS:
            raise RuntimeError(f"Unsupported protocol version from the server: {version}")
        await self.notify("notifications/initialized")
        return result

    async def _page(self, method: str, cursor: str | None) -> Record:
        return await self.request(method, {"cursor": cursor} if cursor else None)

    async def list_tools(self, cursor: str | None = None) -> Record:
        return await self._page("tools/list", cursor)

    async def list_resources(self, cursor: str | None = None) -> Record:
        return await self._page("resources/list", cursor)

    async def list_resource_templates(self, cursor: str | None = None) -> Record:
        return await self._page("resources/templates/list", cursor)

    async def read_resource(self, uri: str) -> Record:
        return await self.request("resources/read", {"uri": uri})

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None, read_timeout_seconds: float | None = None
    ) -> Record:
        return await self.request(
            "tools/call", {"name": name, "arguments": arguments or {}}, read_timeout_seconds
        )
