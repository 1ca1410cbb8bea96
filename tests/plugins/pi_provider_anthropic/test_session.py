"""A whole session through the agent loop: models.json provider → loopback server, tool round trip."""

from __future__ import annotations

import json

import pi_host
from pi_host import hookimpl
from pi_host.loop.tools import Tool, ToolResult
from pi_host.protocol import TextContent
from tests.support.providers.sse import Reply, sse_events


class Upper(Tool):
    name = "upper"
    description = "Upper-case a text"
    parameters = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}

    async def execute(self, tool_call_id, args, signal, on_update, ctx):
        return ToolResult(content=[TextContent(text=args["text"].upper())])


class Tools:
    __name__ = "test-upper"

    @hookimpl
    def register_tools(self):
        return [Upper()]


def tool_turn() -> str:
    args = json.dumps({"text": "héllo"}, ensure_ascii=False)
    events = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1",
                    "model": "claude-local",
                    "usage": {"input_tokens": 50, "output_tokens": 1},
                },
            },
        ),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "upper", "input": {}},
            },
        ),
    ]
    events += [
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": args[i : i + 4]},
            },
        )
        for i in range(0, len(args), 4)
    ]
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 12}},
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return sse_events(events)


def answer_turn(text: str) -> str:
    return sse_events(
        [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": "msg_2",
                        "model": "claude-local",
                        "usage": {"input_tokens": 80, "output_tokens": 1},
                    },
                },
            ),
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            ),
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn"},
                    "usage": {"output_tokens": 5},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
    )


async def test_tool_round_trip_through_a_session(sse_server, isolated_environment):
    agent = isolated_environment["agent"]
    (agent / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "local-claude": {
                        "baseUrl": sse_server.url,
                        "api": "anthropic-messages",
                        "apiKey": "sk-local-dummy",
                        "models": [
                            {
                                "id": "claude-local",
                                "reasoning": True,
                                "contextWindow": 100000,
                                "maxTokens": 8000,
                                "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0},
                            }
                        ],
                    }
                }
            }
        )
    )
    sse_server.enqueue(
        Reply.sse(tool_turn(), chunk_size=17), Reply.sse(answer_turn("It says HÉLLO."), chunk_size=5)
    )
    session = await pi_host.create_session(
        model="local-claude/claude-local",
        plugins=[Tools()],
        tools=["upper"],
        settings={},
        thinking_level="low",
    )
    events = []
    session.subscribe(events.append)
    try:
        await session.prompt("shout héllo")
    finally:
        await session.close()
    final = session.last_assistant()
    assert final.text() == "It says HÉLLO." and final.stop_reason == "stop"
    assert final.usage.input == 80 and final.usage.cost.total > 0
    first, second = (r.json for r in sse_server.requests)
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048, "display": "summarized"}
    assert [t["name"] for t in first["tools"]] == ["upper"]
    assert sse_server.requests[0].headers["x-api-key"] == "sk-local-dummy"
    assert second["messages"][1]["content"] == [
        {"type": "tool_use", "id": "toolu_1", "name": "upper", "input": {"text": "héllo"}}
    ]
    result = second["messages"][2]["content"][0]
    assert result == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "HÉLLO",
        "is_error": False,
        "cache_control": {"type": "ephemeral"},
    }
    kinds = [e["type"] for e in events]
    assert kinds.count("tool_execution_end") == 1
    assert "sk-local-dummy" not in json.dumps([str(e) for e in events])


class ProviderHooks:
    __name__ = "test-provider-hooks"

    def __init__(self):
        self.statuses = []
        self.stream_types = []

    @hookimpl
    def on_before_provider_headers(self, event, ctx):
        event["headers"]["x-from-hook"] = "yes"

    @hookimpl
    def on_after_provider_response(self, event, ctx):
        self.statuses.append(event["status"])

    @hookimpl
    def on_provider_stream_event(self, event, ctx):
        self.stream_types.append((event["provider"], event["data"]["type"]))


async def test_provider_hooks_and_retry_settings_reach_the_adapter(sse_server, isolated_environment):
    agent = isolated_environment["agent"]
    (agent / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "local-claude": {
                        "baseUrl": sse_server.url,
                        "api": "anthropic-messages",
                        "apiKey": "k",
                        "models": [{"id": "claude-local"}],
                    }
                }
            }
        )
    )
    sse_server.enqueue(
        Reply.json(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        Reply.sse(answer_turn("fine")),
    )
    hooks = ProviderHooks()
    session = await pi_host.create_session(
        model="local-claude/claude-local",
        plugins=[hooks],
        settings={"retry": {"provider": {"maxRetries": 1, "baseDelayMs": 10}}},
    )
    try:
        await session.prompt("hi")
    finally:
        await session.close()
    assert session.last_assistant().text() == "fine"
    assert len(sse_server.requests) == 2
    assert sse_server.requests[1].headers["x-from-hook"] == "yes"
    assert hooks.statuses == [529, 200]
    assert hooks.stream_types[0] == ("local-claude", "message_start")
    assert hooks.stream_types[-1] == ("local-claude", "message_stop")


async def test_session_abort_mid_stream_closes_promptly(sse_server, isolated_environment):
    import asyncio
    import time

    from tests.support.providers.sse import STALL

    agent = isolated_environment["agent"]
    (agent / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "local-claude": {
                        "baseUrl": sse_server.url,
                        "api": "anthropic-messages",
                        "apiKey": "k",
                        "models": [{"id": "claude-local"}],
                    }
                }
            }
        )
    )
    head = answer_turn("partial answer")
    head = head[: head.index("event: content_block_stop")]
    sse_server.enqueue(Reply(parts=[head.encode(), STALL]))
    session = await pi_host.create_session(model="local-claude/claude-local", settings={})
    events = []
    session.subscribe(events.append)
    task = asyncio.create_task(session.prompt("hi"))
    while not any(e["type"] == "message_update" for e in events):
        await asyncio.sleep(0.01)
    started = time.monotonic()
    await session.abort()
    await asyncio.wait_for(task, 5)
    assert time.monotonic() - started < 0.5
    final = session.last_assistant()
    assert final.stop_reason == "aborted"
    assert final.text() == "partial answer"
    await session.close()
