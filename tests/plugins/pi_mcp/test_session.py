"""pi-host's own MCP client session (``pi_mcp.session``), in process, against a scripted server on
memory streams: the handshake, answers matched by id whatever their order, error answers and
timeouts as errors (the server told of the cancelled request), a server's ping answered and its
other requests refused, notifications handed on, a connection that ends failing what waits, and
answers read as the SDK's results are read."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from pi_mcp.session import CONNECTION_CLOSED, REQUEST_TIMEOUT, Record, RpcError, StdioSession, is_jsonrpc

INIT = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "instructions": "hi"}


class Server:
    """The other end: what the client sent, and a way to answer."""

    def __init__(self) -> None:
        self.to_client, self.client_reads = anyio.create_memory_object_stream[Any](100)
        self.client_writes, self.from_client = anyio.create_memory_object_stream[Any](100)
        self.seen: list[dict[str, Any]] = []

    async def next(self) -> dict[str, Any]:
        message = await self.from_client.receive()
        self.seen.append(message)
        return message

    async def answer(self, request: dict[str, Any], result: Any = None, error: Any = None) -> None:
        reply = {"jsonrpc": "2.0", "id": request["id"]}
        reply.update(
            {"error": error} if error is not None else {"result": result if result is not None else {}}
        )
        await self.to_client.send(reply)

    def session(self, timeout: float = 5.0, on_notification: Any = None) -> StdioSession:
        return StdioSession(self.client_reads, self.client_writes, timeout, on_notification)


async def _handshake(server: Server, result: dict[str, Any] = INIT) -> None:
    request = await server.next()
    await server.answer(request, result)
    assert (await server.next())["method"] == "notifications/initialized"


async def test_the_handshake_offers_the_newest_revision_and_reads_the_answer_as_the_sdk_does():
    server = Server()
    async with server.session() as session, anyio.create_task_group() as group:
        group.start_soon(_handshake, server)
        result = await session.initialize()
    request = server.seen[0]
    assert request["method"] == "initialize" and request["jsonrpc"] == "2.0"
    assert request["params"]["protocolVersion"] == "2025-11-25" and request["params"]["capabilities"] == {}
    assert result.instructions == "hi" and result.protocol_version == "2025-06-18"
    assert result.capabilities.tools is not None and result.capabilities.resources is None


async def test_an_unknown_protocol_revision_is_refused():
    server = Server()
    async with server.session() as session, anyio.create_task_group() as group:
        group.start_soon(server.answer, {"id": 1}, {**INIT, "protocolVersion": "1999-01-01"})
        with pytest.raises(RuntimeError, match="Unsupported protocol version from the server: 1999-01-01"):
            await session.initialize()


async def test_answers_are_matched_by_id_in_any_order_and_errors_are_raised_with_the_servers_message():
    server = Server()
    results: dict[str, Any] = {}

    async def serve() -> None:
        first, second, third = await server.next(), await server.next(), await server.next()
        await server.answer(third, error={"code": -32602, "message": "Unknown resource: nope://x"})
        await server.answer(second, {"contents": [{"uri": "a://b", "text": "B"}]})
        page = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}], "nextCursor": "2"}
        await server.answer(first, page)

    async def read(name: str, call: Any) -> None:
        try:
            results[name] = await call()
        except RpcError as exc:
            results[name] = exc

    async with server.session() as session, anyio.create_task_group() as group:
        group.start_soon(serve)
        group.start_soon(read, "tools", session.list_tools)
        await anyio.sleep(0.01)
        group.start_soon(read, "read", lambda: session.read_resource("a://b"))
        await anyio.sleep(0.01)
        group.start_soon(read, "bad", lambda: session.read_resource("nope://x"))
    assert [m["method"] for m in server.seen] == ["tools/list", "resources/read", "resources/read"]
    tools = results["tools"]
    assert tools.next_cursor == "2" and tools.tools[0].name == "echo"
    assert tools.tools[0].input_schema == {"type": "object"} and isinstance(tools.tools[0].input_schema, dict)
    assert results["read"].contents[0].model_dump() == {"uri": "a://b", "text": "B"}
    error = results["bad"]
    assert isinstance(error, RpcError) and str(error) == "Unknown resource: nope://x" and error.code == -32602


async def test_a_cursor_is_sent_as_params_and_a_first_page_without_params():
    server = Server()

    async def serve() -> None:
        for _ in range(2):
            await server.answer(await server.next(), {"resources": []})

    async with server.session() as session, anyio.create_task_group() as group:
        group.start_soon(serve)
        await session.list_resources()
        await session.list_resource_templates("abc")
    assert "params" not in server.seen[0]
    assert server.seen[1] == {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "resources/templates/list",
        "params": {"cursor": "abc"},
    }


async def test_a_request_past_its_timeout_fails_and_the_server_is_told_it_is_cancelled():
    server = Server()
    async with server.session(timeout=5.0) as session:
        with pytest.raises(RpcError) as caught:
            await session.call_tool("slow", {"x": 1}, read_timeout_seconds=0.05)
        cancelled = [await server.next(), await server.next()][1]
    assert caught.value.code == REQUEST_TIMEOUT and str(caught.value) == "Request 'tools/call' timed out"
    assert server.seen[0]["params"] == {"name": "slow", "arguments": {"x": 1}}
    assert (
        cancelled["method"] == "notifications/cancelled"
        and cancelled["params"]["requestId"] == server.seen[0]["id"]
    )


async def test_a_ping_is_answered_other_server_requests_refused_and_notifications_handed_on():
    server = Server()
    notes: list[Record] = []

    async def noted(note: Record) -> None:
        notes.append(note)

    async with server.session(on_notification=noted):
        await server.to_client.send({"jsonrpc": "2.0", "id": "p1", "method": "ping"})
        await server.to_client.send(
            {"jsonrpc": "2.0", "id": 7, "method": "sampling/createMessage", "params": {}}
        )
        await server.to_client.send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        pong, refused = await server.next(), await server.next()
        await anyio.sleep(0.01)
    assert pong == {"jsonrpc": "2.0", "id": "p1", "result": {}}
    assert refused["id"] == 7 and refused["error"]["code"] == -32601
    assert [n.method for n in notes] == ["notifications/tools/list_changed"]


async def test_a_connection_that_ends_fails_what_waits_and_what_comes_after():
    server = Server()
    async with server.session() as session:

        async def close_soon() -> None:
            await server.next()
            await server.to_client.aclose()

        async with anyio.create_task_group() as group:
            group.start_soon(close_soon)
            with pytest.raises(RpcError) as waiting:
                await session.list_tools()
        with pytest.raises(RpcError) as after:
            await session.list_tools()
    assert waiting.value.code == after.value.code == CONNECTION_CLOSED


def test_what_counts_as_json_rpc():
    assert is_jsonrpc({"jsonrpc": "2.0", "method": "x"})
    assert is_jsonrpc({"jsonrpc": "2.0", "id": 1, "result": None})
    assert is_jsonrpc({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "m"}})
    for junk in (
        [1, 2],
        "text",
        {"hello": 1},
        {"jsonrpc": "1.0", "method": "x"},
        {"jsonrpc": "2.0", "id": 1},
        {"jsonrpc": "2.0", "id": 1, "error": "bad"},
        {"jsonrpc": "2.0", "method": 5},
    ):
        assert not is_jsonrpc(junk), junk


def test_records_read_like_sdk_models():
    record = Record(
        {
            "isError": True,
            "structuredContent": {"a": {"b": 1}},
            "annotations": {"readOnlyHint": True, "title": None},
        }
    )
    assert record.is_error is True and record.missing is None
    assert record.structured_content == {"a": {"b": 1}}  # plain JSON, as the SDK keeps it
    assert record.annotations.model_dump(by_alias=True, exclude_none=True) == {"readOnlyHint": True}
    assert dict(record)["isError"] is True
    with pytest.raises(AttributeError):
        record.__deepcopy__  # noqa: B018 - copy must not find a method that is None
