"""Local OpenAI-compatible servers (reference §3.12) configured through models.json: the compat
flags written there (provider level, then model level) reach the request, and the server
quirks they describe (no usage, no finish_reason, ``reasoning`` deltas) are handled."""

from __future__ import annotations

import json

from pi_host.config.models import ModelRegistry
from pi_host.plugins.selection import PluginRequest, load_plugins
from tests.support.providers.openai_google import (  # noqa: F401 - fixtures
    collect,
    context,
    final,
    module_server_fixture,
    options,
    sse_fixture,
)
from tests.support.providers.sse import Reply


def registry_with(agent_dir, providers: dict) -> ModelRegistry:
    (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))
    return ModelRegistry.from_plugins(load_plugins(PluginRequest(cwd=str(agent_dir))).host)


async def test_llama_cpp_style_server(sse, isolated_environment):
    """llama-cpp-python: no usage chunk, no finish_reason; compat says so in models.json."""
    registry = registry_with(
        isolated_environment["agent"],
        {
            "llama": {
                "baseUrl": sse.url + "/v1",
                "api": "openai-completions",
                "apiKey": "unused",
                "compat": {
                    "supportsUsageInStreaming": False,
                    "supportsFinishReason": False,
                    "maxTokensField": "max_tokens",
                },
                "models": [{"id": "local", "contextWindow": 8192, "maxTokens": 2048}],
            }
        },
    )
    model = registry.find("llama", "local")
    sse.enqueue(Reply.from_fixture("openai/completions_no_finish.sse", chunk_size=3))
    stream = registry.stream_fn(model)(model, context(), options(api_key=registry.get_api_key("llama")))
    events = await collect(stream)
    message = final(events)
    assert events[-1].type == "done" and message.stop_reason == "stop"
    assert message.text() == "Partial answer"
    assert message.usage.is_empty()  # unknown, not "empty context" (§1.4)
    body = sse.last.json
    assert "stream_options" not in body and body["max_tokens"] <= 2048 and "max_completion_tokens" not in body
    assert body["store"] is False and body["messages"][0]["role"] == "system"
    assert sse.last.headers["authorization"] == "Bearer unused"


async def test_vllm_qwen_chat_template_model_level_compat_wins(sse, isolated_environment):
    registry = registry_with(
        isolated_environment["agent"],
        {
            "local-vllm": {
                "baseUrl": sse.url + "/v1",
                "api": "openai-completions",
                "apiKey": "unused",
                "compat": {
                    "thinkingFormat": "qwen-chat-template",
                    "thinkingTokenBudgetField": "thinking_token_budget",
                    "vllmPriority": 5,
                },
                "models": [
                    {"id": "qwen3-coder", "reasoning": True, "contextWindow": 65536, "maxTokens": 8192},
                    {
                        "id": "qwen3-plain",
                        "reasoning": True,
                        "compat": {"thinkingFormat": "qwen", "thinkingTokenBudgetField": None},
                    },
                ],
            }
        },
    )
    model = registry.find("local-vllm", "qwen3-coder")
    sse.enqueue(Reply.from_fixture("openai/completions_tools.sse", chunk_size=64))
    message = final(
        await collect(registry.stream_fn(model)(model, context(), options(thinking_level="medium")))
    )
    assert message.content[0].thinking_signature == "reasoning_content"
    body = sse.last.json
    assert body["chat_template_kwargs"] == {"enable_thinking": True, "preserve_thinking": True}
    assert body["thinking_token_budget"] == 7168  # 8192, leaving 1024 for the answer (§3.2)
    assert body["priority"] == 5

    plain = registry.find("local-vllm", "qwen3-plain")
    sse.enqueue(Reply.from_fixture("openai/completions_text.sse"))
    await collect(registry.stream_fn(plain)(plain, context(), options(thinking_level="medium")))
    body = sse.last.json
    assert body["enable_thinking"] is True and "chat_template_kwargs" not in body
    assert "thinking_token_budget" not in body and body["priority"] == 5


async def test_ollama_reasoning_field_replayed_under_the_same_name(sse, isolated_environment):
    registry = registry_with(
        isolated_environment["agent"],
        {
            "ollama": {
                "baseUrl": sse.url + "/v1",
                "api": "openai-completions",
                "apiKey": "ollama",
                "models": [{"id": "gpt-oss:20b", "reasoning": True}],
            },
        },
    )
    model = registry.resolve("ollama/gpt-oss:20b")
    assert model.id == "gpt-oss:20b"
    sse.enqueue(Reply.from_fixture("openai/completions_tools_reasoning_field.sse", chunk_size=5))
    first = final(await collect(registry.stream_fn(model)(model, context(), options(thinking_level="low"))))
    assert first.content[0].thinking_signature == "reasoning"
    from pi_host.protocol import TextContent, ToolResultMessage, UserMessage

    results = [
        ToolResultMessage(tool_call_id=c.id, tool_name=c.name, content=[TextContent(text="ok")])
        for c in first.tool_calls()
    ]
    sse.enqueue(Reply.from_fixture("openai/completions_text.sse"))
    ctx = context(messages=[UserMessage(content="Read main.py"), first, *results])
    await collect(registry.stream_fn(model)(model, ctx, options(thinking_level="low")))
    assistant = sse.last.json["messages"][2]
    assert assistant["reasoning"] == first.content[0].thinking and "reasoning_content" not in assistant
    assert assistant["content"] == "Reading now."
    assert [m["role"] for m in sse.last.json["messages"]] == ["system", "user", "assistant", "tool", "tool"]
