"""The Codex WebSocket transport's decisions, with scripted sockets in place of the network
(pi 1.6.0's behaviour): the connection-limit and previous-response-not-found retries, which
failures fall back to SSE (and for how long), the diagnostic, the backend's own errors, the
``sse`` transport, and a continued request on a reused socket."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from pi_provider_openai import codex, codex_stream, codex_ws

from pi_host.config.models import ModelRegistry
from pi_host.plugins.selection import PluginRequest, load_plugins
from pi_host.protocol import LlmContext, StreamOptions, UserMessage


def _token() -> str:
    claims = {"https://api.openai.com/auth": {"chatgpt_account_id": "acct-1"}}
    part = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    return f"e30.{part}.sig"


def _answer(n: int, text: str = "hello") -> list[dict[str, Any]]:
    rid, msg = f"resp_{n}", f"msg_{n}"
    return [
        {"type": "response.created", "response": {"id": rid, "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"type": "message", "id": msg, "role": "assistant", "content": []}},
        {"type": "response.output_text.delta", "output_index": 0, "item_id": msg, "delta": text},
        {"type": "response.output_item.done", "output_index": 0, "item": {
            "type": "message", "id": msg, "role": "assistant", "content": [{"type": "output_text", "text": text}]}},
        {"type": "response.done", "response": {"id": rid, "status": "completed", "end_turn": True}},
    ]  # fmt: skip


def _error(code: str) -> dict[str, Any]:
    return {"type": "error", "error": {"code": code, "message": f"{code} happened"}}


class Socket:
    """One scripted connection: each ``send`` takes the next answer (a list of events, an
    exception among them is raised by ``recv`` at its place)."""

    def __init__(self, answers: list[list[Any]]) -> None:
        from websockets.protocol import State

        self.answers, self.sent, self.queue, self.state = answers, [], [], State.OPEN

    async def send(self, text: str) -> None:
        self.sent.append(json.loads(text))
        self.queue = list(self.answers.pop(0))

    async def recv(self) -> str:
        item = self.queue.pop(0)
        if isinstance(item, BaseException):
            raise item
        return json.dumps(item)

    async def close(self, code: int = 1000, reason: str = "") -> None:
        from websockets.protocol import State

        self.state = State.CLOSED


@pytest.fixture(scope="module")
def model() -> Any:
    registry = ModelRegistry.from_plugins(load_plugins(PluginRequest(cwd=".")).host)
    return registry.find("openai-codex", "gpt-5.6-sol")


@pytest.fixture
def net(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """``sockets``: the connections to hand out, in order (an exception is a failed connect);
    ``opened`` the ones handed out; ``sse`` the bodies that went over SSE (answered "over sse")."""
    state: dict[str, list[Any]] = {"sockets": [], "opened": [], "sse": []}

    async def connect(url: str, headers: dict[str, str], timeout_s: Any = None) -> Any:
        assert url.startswith("ws://") and headers["openai-beta"] == codex_ws.OPENAI_BETA_WEBSOCKETS
        socket = state["sockets"].pop(0)
        if isinstance(socket, BaseException):
            raise socket
        state["opened"].append(socket)
        return socket

    async def sse(
        builder: Any, url: str, body: dict[str, Any], headers: Any, options: Any, started: list
    ) -> Any:
        state["sse"].append(body)
        if not started[0]:
            started[0] = True
            yield builder.start()
        parser = codex_stream.ResponsesParser(builder)
        for event in _answer(99, "over sse"):
            for out in parser.feed(event):
                yield out
        for out in parser.finish():
            yield out

    monkeypatch.setattr(codex_ws, "connect", connect)
    monkeypatch.setattr(codex_stream, "_sse", sse)
    yield state
    codex_ws.close_sessions()
    codex_ws.reset()


async def _ask(model: Any, session: str | None, *, transport: str | None = None, messages: Any = None) -> Any:
    model = model.model_copy(update={"base_url": "http://127.0.0.1:9"})
    options = StreamOptions(api_key=_token(), session_id=session)
    if transport:
        options.extra = {"transport": transport}
    context = LlmContext(messages=messages or [UserMessage(content="hi")])
    events = [event async for event in codex.stream_codex(model, context, options)]
    assert [e.type for e in events].count("start") <= 1
    last = events[-1]
    return last.message if last.type == "done" else last.error


async def test_connection_limit_before_the_answer_is_retried_once_on_a_new_socket(model, net):
    net["sockets"] = [Socket([[_error("websocket_connection_limit_reached")]]), Socket([_answer(1)])]
    reply = await _ask(model, "s-limit")
    assert reply.stop_reason == "stop" and reply.text() == "hello" and reply.end_turn is True
    assert len(net["opened"]) == 2 and not net["sse"] and reply.diagnostics is None
    assert not codex_ws.fallback_active("s-limit")


async def test_a_second_connection_limit_falls_back_to_sse_with_the_diagnostic(model, net):
    limit = [_error("websocket_connection_limit_reached")]
    net["sockets"] = [Socket([limit]), Socket([limit])]
    reply = await _ask(model, "s-limit2")
    assert reply.text() == "over sse" and len(net["sse"]) == 1
    (diagnostic,) = reply.diagnostics
    assert diagnostic["error"] == {
        "name": "CodexApiError", "message": "Codex error: websocket_connection_limit_reached happened",
        "code": "websocket_connection_limit_reached",
    }  # fmt: skip
    assert diagnostic["details"]["phase"] == "before_message_stream_start"
    assert diagnostic["details"]["requestBytes"] == len(codex_stream.compact_json(net["sse"][0]))
    assert codex_ws.fallback_active("s-limit2")
    second = await _ask(model, "s-limit2")  # straight to SSE: no socket asked for
    assert second.text() == "over sse" and len(net["sse"]) == 2 and second.diagnostics is None
    assert codex_ws.stats("s-limit2")["sseFallbacks"] == 2


async def test_previous_response_not_found_resends_the_whole_body_on_a_new_socket(model, net):
    first = Socket([_answer(1), [_error("previous_response_not_found")]])
    net["sockets"] = [first, Socket([_answer(2, "again")])]
    reply = await _ask(model, "s-missing")
    follow = [UserMessage(content="hi"), reply, UserMessage(content="more")]
    second = await _ask(model, "s-missing", messages=follow)
    assert second.text() == "again" and second.diagnostics is None and not net["sse"]
    continued, resent = first.sent[1], net["opened"][1].sent[0]
    assert continued["previous_response_id"] == "resp_1" and len(continued["input"]) == 1
    assert "previous_response_id" not in resent and len(resent["input"]) > 1
    assert {k: v for k, v in resent.items() if k != "input"} == {
        k: v for k, v in continued.items() if k not in ("input", "previous_response_id")
    }


async def test_the_backends_own_error_ends_the_reply_without_fallback(model, net):
    net["sockets"] = [Socket([[_error("server_is_overloaded")]])]
    reply = await _ask(model, "s-error")
    assert (
        reply.stop_reason == "error" and reply.error_message == "Codex error: server_is_overloaded happened"
    )
    assert not net["sse"] and reply.diagnostics is None and not codex_ws.fallback_active("s-error")


async def test_a_socket_lost_mid_answer_is_an_error_and_the_session_moves_to_sse(model, net):
    from websockets.exceptions import ConnectionClosedError
    from websockets.frames import Close

    lost = ConnectionClosedError(Close(1011, "internal"), None)
    net["sockets"] = [Socket([[*_answer(1)[:3], lost]])]
    reply = await _ask(model, "s-lost")
    assert reply.stop_reason == "error" and reply.error_message == "WebSocket closed 1011 internal"
    assert not net["sse"]
    (diagnostic,) = reply.diagnostics
    assert diagnostic["error"]["code"] == 1011
    assert diagnostic["details"]["phase"] == "after_message_stream_start"
    assert diagnostic["details"]["eventsEmitted"] is True and "fallbackTransport" not in diagnostic["details"]
    assert codex_ws.fallback_active("s-lost")


async def test_a_refused_connection_without_a_session_tries_the_socket_every_time(model, net):
    refused = codex_ws.WebSocketTransportError("WebSocket upgrade refused: HTTP 403", 403)
    net["sockets"] = [refused, refused]
    for _ in range(2):
        reply = await _ask(model, None)
        assert reply.text() == "over sse" and reply.diagnostics[0]["details"]["fallbackTransport"] == "sse"
    assert not net["sockets"] and len(net["sse"]) == 2


async def test_the_sse_transport_never_opens_a_socket(model, net):
    reply = await _ask(model, "s-sse", transport="sse")
    assert reply.text() == "over sse" and not net["opened"] and codex_ws.stats("s-sse") is None


async def test_the_websocket_transport_sends_whole_bodies_on_a_reused_socket(model, net):
    socket = Socket([_answer(1), _answer(2)])
    net["sockets"] = [socket]
    reply = await _ask(model, "s-plain", transport="websocket")
    await _ask(model, "s-plain", transport="websocket", messages=[UserMessage(content="hi"), reply])
    assert len(net["opened"]) == 1 and all("previous_response_id" not in m for m in socket.sent)
    counters = codex_ws.stats("s-plain")
    assert counters["connectionsReused"] == 1 and counters["fullContextRequests"] == 2


def test_websocket_headers_and_url():
    headers = {"accept": "text/event-stream", "content-type": "application/json", "openai-beta": "x",
               "authorization": "Bearer t", "session-id": "old", "x-client-request-id": "old", "drop": None}  # fmt: skip
    assert codex.websocket_headers(headers, "sid") == {
        "authorization": "Bearer t", "openai-beta": "responses_websockets=2026-02-06",
        "x-client-request-id": "sid", "session-id": "sid",
    }  # fmt: skip
    assert (
        codex.websocket_url("https://chatgpt.com/backend-api")
        == "wss://chatgpt.com/backend-api/codex/responses"
    )
    assert codex.websocket_url("http://127.0.0.1:8/codex") == "ws://127.0.0.1:8/codex/responses"


def test_zstd_body_round_trips():
    zstandard = pytest.importorskip("zstandard")
    data = codex_stream.compact_json({"input": ["x" * 1000]})
    packed = codex_stream.compress_zstd(data)
    assert packed is not None and len(packed) < len(data)
    assert zstandard.ZstdDecompressor().decompressobj().decompress(packed) == data
