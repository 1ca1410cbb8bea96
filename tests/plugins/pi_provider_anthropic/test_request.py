"""The request anthropic-messages sends (reference §3.3, §11 items 7-9, 12-15)."""

from __future__ import annotations

import json

import pytest

from pi_host.protocol import (
    AssistantMessage,
    ImageContent,
    LlmContext,
    StreamOptions,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tests.support.providers.anthropic import BASH, READ, model_for, run, simple_context
from tests.support.providers.sse import Reply

PNG = "iVBORw0KGgo="


async def send(sse_server, model, context, **options):
    sse_server.enqueue(Reply.from_fixture("anthropic/anthropic_text.sse"))
    options.setdefault("api_key", "sk-ant-api-test")
    events = await run(model, context, StreamOptions(**options))
    assert events[-1].type == "done", events[-1]
    return sse_server.last


def cache_marks(body) -> list[str]:
    """Paths of every cache_control in the body."""
    found = []

    def walk(node, path):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "cache_control":
                    found.append(path)
                walk(value, f"{path}.{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}[{i}]")

    walk(body, "")
    return found


async def test_request_shape_budget_and_cache_control(sse_server):
    request = await send(sse_server, model_for(sse_server.url), simple_context(), thinking_level="medium")
    body = request.json
    assert request.path == "/v1/messages"
    assert list(body)[:4] == ["model", "max_tokens", "stream", "thinking"]
    assert body["model"] == "claude-sonnet-4-5"
    assert body["max_tokens"] == 16384
    assert body["stream"] is True
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192, "display": "summarized"}
    assert body["system"] == [
        {"type": "text", "text": "You are a helper.", "cache_control": {"type": "ephemeral"}}
    ]
    assert [t["name"] for t in body["tools"]] == ["read", "bash"]
    assert body["tools"][0] == {
        "name": "read",
        "description": "Read a file",
        "eager_input_streaming": True,
        "input_schema": READ.parameters,
    }
    assert body["tools"][1]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Which files changed?", "cache_control": {"type": "ephemeral"}}
            ],
        }
    ]
    assert sorted(cache_marks(body)) == sorted([".system[0]", ".tools[1]", ".messages[0].content[0]"])
    assert "temperature" not in body
    headers = request.headers
    assert headers["anthropic-version"] == "2023-06-01"
    assert headers["x-api-key"] == "sk-ant-api-test"
    assert "authorization" not in headers
    assert headers["anthropic-dangerous-direct-browser-access"] == "true"
    assert headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert headers["user-agent"].startswith("pi-host/")


async def test_thinking_off_disabled_and_temperature(sse_server):
    body = (
        await send(
            sse_server, model_for(sse_server.url), simple_context(), thinking_level="off", temperature=0.2
        )
    ).json
    assert body["thinking"] == {"type": "disabled"}
    assert body["temperature"] == 0.2
    assert body["max_tokens"] == 16384
    assert "anthropic-beta" not in sse_server.last.headers


async def test_non_reasoning_model_sends_no_thinking(sse_server):
    model = model_for(sse_server.url, reasoning=False)
    body = (await send(sse_server, model, simple_context(), thinking_level="high")).json
    assert "thinking" not in body


async def test_adaptive_thinking_and_effort(sse_server):
    model = model_for(sse_server.url, compat={"forceAdaptiveThinking": True})
    body = (await send(sse_server, model, simple_context(), thinking_level="minimal")).json
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["output_config"] == {"effort": "low"}
    assert body["max_tokens"] == 16384
    assert "anthropic-beta" not in sse_server.last.headers


async def test_budget_clamped_to_leave_room_for_answer(sse_server):
    model = model_for(sse_server.url, maxTokens=4096)
    body = (await send(sse_server, model, simple_context(), thinking_level="high")).json
    assert body["max_tokens"] == 4096
    assert body["thinking"]["budget_tokens"] == 4096 - 1024
    body = (
        await send(
            sse_server,
            model_for(sse_server.url),
            simple_context(),
            thinking_level="high",
            thinking_budgets={"high": 3000},
        )
    ).json
    assert body["thinking"]["budget_tokens"] == 3000


async def test_cache_retention_long_and_none(sse_server):
    model = model_for(sse_server.url, compat={"supportsLongCacheRetention": True})
    body = (await send(sse_server, model, simple_context(), cache_retention="long")).json
    assert body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    body = (await send(sse_server, model, simple_context(), cache_retention="none")).json
    assert cache_marks(body) == []


async def test_no_eager_streaming_uses_fine_grained_beta_and_no_tool_cache(sse_server):
    model = model_for(
        sse_server.url,
        compat={"supportsEagerToolInputStreaming": False, "supportsCacheControlOnTools": False},
    )
    body = (await send(sse_server, model, simple_context(), thinking_level="off")).json
    assert all("eager_input_streaming" not in t for t in body["tools"])
    assert all("cache_control" not in t for t in body["tools"])
    assert sse_server.last.headers["anthropic-beta"] == "fine-grained-tool-streaming-2025-05-14"


def conversation(model_id="claude-sonnet-4-5", provider="anthropic", api="anthropic-messages"):
    assistant = AssistantMessage(
        api=api,
        provider=provider,
        model=model_id,
        stop_reason="toolUse",
        content=[
            ThinkingContent(thinking="plan", thinking_signature="sig-1"),
            ThinkingContent(thinking="", thinking_signature="opaque", redacted=True),
            TextContent(text="Reading both."),
            TextContent(text="   "),
            ToolCall(id="call_abc|item+/=", name="read", arguments={"path": "a.txt"}),
            ToolCall(id="toolu_2", name="read", arguments={"path": "b.png"}),
        ],
    )
    return [
        SystemMessage(content="", sections={"preamble": "Base prompt."}, tools_added=[READ, BASH]),
        UserMessage(content="read a and b"),
        assistant,
        ToolResultMessage(
            tool_call_id="call_abc|item+/=",
            tool_name="read",
            content=[TextContent(text="A"), TextContent(text="B")],
        ),
        ToolResultMessage(
            tool_call_id="toolu_2", tool_name="read", content=[ImageContent(data=PNG, mime_type="image/png")]
        ),
    ]


async def test_same_model_history_conversion(sse_server):
    context = LlmContext(messages=conversation(), tools=[READ, BASH])
    body = (await send(sse_server, model_for(sse_server.url), context)).json
    user, assistant, results = body["messages"]
    assert user == {"role": "user", "content": "read a and b"}
    assert assistant["content"] == [
        {"type": "thinking", "thinking": "plan", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "text", "text": "Reading both."},
        {"type": "tool_use", "id": "call_abc|item+/=", "name": "read", "input": {"path": "a.txt"}},
        {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {"path": "b.png"}},
    ]
    # consecutive tool results: one user message; text-only content is a plain string
    assert results["role"] == "user"
    first, second = results["content"]
    assert first == {
        "type": "tool_result",
        "tool_use_id": "call_abc|item+/=",
        "content": "A\nB",
        "is_error": False,
    }
    assert second["content"][0]["type"] == "text"
    assert second["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PNG},
    }
    assert second["cache_control"] == {"type": "ephemeral"}
    assert body["system"][0]["text"] == "Base prompt."


async def test_cross_model_history_is_transformed(sse_server):
    messages = conversation(model_id="gpt-5", provider="openai", api="openai-responses")
    messages.append(
        AssistantMessage(
            api="openai-responses",
            provider="openai",
            model="gpt-5",
            stop_reason="error",
            error_message="boom",
            content=[TextContent(text="half")],
        )
    )
    messages.append(UserMessage(content="again"))
    body = (
        await send(sse_server, model_for(sse_server.url), LlmContext(messages=messages, tools=[READ]))
    ).json
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user", "user"]
    assistant = body["messages"][1]["content"]
    assert [b["type"] for b in assistant] == ["text", "tool_use", "tool_use"]  # foreign thinking dropped
    assert assistant[1]["id"] == "call_abc_item___"
    assert body["messages"][2]["content"][0]["tool_use_id"] == "call_abc_item___"
    assert "half" not in json.dumps(body)  # errored turn left out


async def test_orphaned_tool_call_gets_synthetic_result(sse_server):
    messages = conversation()[:3] + [UserMessage(content="never mind")]
    body = (
        await send(sse_server, model_for(sse_server.url), LlmContext(messages=messages, tools=[READ]))
    ).json
    results = body["messages"][2]["content"]
    assert [r["tool_use_id"] for r in results] == ["call_abc|item+/=", "toolu_2"]
    assert all(r["is_error"] for r in results)
    assert body["messages"][3]["content"][-1]["text"] == "never mind"


async def test_error_tool_result_images_move_after_results(sse_server):
    messages = conversation()
    messages[-1] = messages[-1].model_copy(
        update={
            "is_error": True,
            "content": [TextContent(text="bad"), ImageContent(data=PNG, mime_type="image/png")],
        }
    )
    body = (
        await send(sse_server, model_for(sse_server.url), LlmContext(messages=messages, tools=[READ]))
    ).json
    content = body["messages"][2]["content"]
    assert [b["type"] for b in content] == ["tool_result", "tool_result", "text", "image"]
    assert content[1]["content"] == "bad" and content[1]["is_error"] is True


async def test_text_only_model_gets_image_placeholder(sse_server):
    model = model_for(sse_server.url, input=["text"])
    context = LlmContext(
        messages=[
            UserMessage(
                content=[
                    TextContent(text="look"),
                    ImageContent(data=PNG, mime_type="image/png"),
                    ImageContent(data=PNG, mime_type="image/png"),
                ]
            )
        ]
    )
    body = (await send(sse_server, model, context)).json
    content = body["messages"][0]["content"]
    assert [b["type"] for b in content] == ["text", "text"]
    assert "image" in content[1]["text"].lower()


async def test_mid_conversation_system_messages_are_collapsed(sse_server):
    messages = conversation()[:2] + [
        SystemMessage(content="Be brief.", sections={"extra": "<extra>\nx\n</extra>"})
    ]
    body = (
        await send(sse_server, model_for(sse_server.url), LlmContext(messages=messages, tools=[READ]))
    ).json
    assert body["system"][0]["text"] == "Be brief.\n\nBase prompt.\n\n<extra>\nx\n</extra>"
    assert [m["role"] for m in body["messages"]] == ["user"]


async def test_headers_auth_modes_and_payload_hook(sse_server, monkeypatch):
    model = model_for(sse_server.url, headers={"x-team": "$TEAM_NAME"})
    monkeypatch.setenv("TEAM_NAME", "blue")
    seen = []

    async def hook(payload):
        seen.append(payload["model"])
        return {**payload, "metadata": {"user_id": "u1"}}

    request = await send(sse_server, model, simple_context(), api_key="sk-ant-oat01-abc", on_payload=hook)
    assert request.headers["authorization"] == "Bearer sk-ant-oat01-abc"
    assert "x-api-key" not in request.headers
    assert request.headers["x-team"] == "blue"
    assert "oauth-2025-04-20" in request.headers["anthropic-beta"]
    assert request.json["metadata"] == {"user_id": "u1"} and seen == ["claude-sonnet-4-5"]
    assert request.json["system"][0]["text"].startswith("You are Claude Code")
    assert [t["name"] for t in request.json["tools"]] == ["Read", "Bash"]
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "gateway-token")
    request = await send(sse_server, model, simple_context(), api_key="gateway-token")
    assert request.headers["authorization"] == "Bearer gateway-token"


@pytest.mark.parametrize("base", ["/", "/v1", "/anthropic"])
async def test_base_url_forms(sse_server, base):
    model = model_for(sse_server.url + base)
    request = await send(sse_server, model, simple_context())
    expected = {"/": "/v1/messages", "/v1": "/v1/messages", "/anthropic": "/anthropic/v1/messages"}[base]
    assert request.path == expected


async def test_header_response_and_stream_event_callbacks(sse_server):
    seen = {"events": []}

    def on_headers(headers):
        headers["x-extra"] = "1"
        headers["anthropic-dangerous-direct-browser-access"] = None

    async def on_response(status, headers):
        seen["status"] = status

    request = await send(
        sse_server,
        model_for(sse_server.url),
        simple_context(),
        on_headers=on_headers,
        on_response=on_response,
        on_stream_event=seen["events"].append,
    )
    assert request.headers["x-extra"] == "1"
    assert "anthropic-dangerous-direct-browser-access" not in request.headers
    assert "x-api-key" in request.headers
    assert seen["status"] == 200
    assert [e["type"] for e in seen["events"]][:2] == ["message_start", "content_block_start"]
    assert seen["events"][-1] == {"type": "message_stop"}


async def test_auth_header_provider_and_user_images(sse_server):
    model = model_for(sse_server.url, authHeader=True)
    context = LlmContext(
        messages=[
            UserMessage(
                content=[TextContent(text="what is this"), ImageContent(data=PNG, mime_type="image/png")]
            )
        ]
    )
    request = await send(sse_server, model, context)
    assert request.headers["authorization"] == "Bearer sk-ant-api-test"
    assert request.headers["x-api-key"] == "sk-ant-api-test"  # pi sends both (the SDK keeps x-api-key)
    content = request.json["messages"][0]["content"]
    assert content[0] == {"type": "text", "text": "what is this"}
    assert content[1]["source"] == {"type": "base64", "media_type": "image/png", "data": PNG}
    assert content[1]["cache_control"] == {"type": "ephemeral"}


async def test_lone_surrogates_scrubbed_from_outgoing_text(sse_server):
    request = await send(sse_server, model_for(sse_server.url), simple_context("bad \ud800 text 🎉"))
    assert request.json["messages"][0]["content"][0]["text"] == "bad  text 🎉"
