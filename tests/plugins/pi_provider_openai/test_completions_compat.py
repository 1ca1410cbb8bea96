"""openai-completions request building: compat flags detected from provider id and base URL,
explicit ``compat`` overrides, thinking formats, message conversion rules (reference §3.4)."""

from __future__ import annotations

import pytest
from pi_provider_openai import compat
from pi_provider_openai.completions import prepare

from pi_host.protocol import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tests.support.providers.openai_google import context, make_model, options

PNG = "iVBORw0KGgo="


def body_for(provider="local", base_url="http://127.0.0.1:8000/v1", ctx=None, **fields):
    opts = {
        k: fields.pop(k)
        for k in list(fields)
        if k in ("thinking_level", "session_id", "cache_retention", "temperature")
    }
    model = make_model(base_url, provider=provider, **fields)
    url, body, headers, flags = prepare(model, ctx or context(), options(**opts))
    return body, headers, flags


@pytest.mark.parametrize(
    ("provider", "base_url", "expected"),
    [
        (
            "openai",
            "https://api.openai.com/v1",
            {"supportsStore": True, "supportsDeveloperRole": True, "maxTokensField": "max_completion_tokens"},
        ),
        (
            "deepseek",
            "https://api.deepseek.com",
            {
                "supportsStore": False,
                "maxTokensField": "max_tokens",
                "thinkingFormat": "deepseek",
                "requiresReasoningContentOnAssistantMessages": True,
            },
        ),
        ("xai", "https://api.x.ai/v1", {"supportsStore": False, "supportsReasoningEffort": False}),
        ("my-proxy", "https://api.cerebras.ai/v1", {"supportsStore": False, "supportsDeveloperRole": False}),
        (
            "zai",
            "https://api.z.ai/api/paas/v4",
            {"thinkingFormat": "zai", "maxTokensField": "max_tokens", "supportsReasoningEffort": False},
        ),
        (
            "openrouter",
            "https://openrouter.ai/api/v1",
            {"thinkingFormat": "openrouter", "supportsStore": True, "sessionAffinityHeader": "x-session-id"},
        ),
        (
            "chutes-mirror",
            "https://llm.chutes.ai/v1",
            {"maxTokensField": "max_tokens", "supportsStore": False},
        ),
        (
            "groq",
            "https://api.groq.com/openai/v1",
            {"supportsStore": True, "thinkingFormat": "openai", "supportsDeveloperRole": False},
        ),
        (
            "ollama",
            "http://127.0.0.1:11434/v1",
            {
                "supportsStore": True,
                "supportsDeveloperRole": False,
                "supportsStrictMode": False,
                "thinkingFormat": "openai",
            },
        ),
    ],
)
def test_detected_defaults(provider, base_url, expected):
    flags = compat.detect(provider, base_url)
    for key, value in expected.items():
        assert flags[key] == value, key


def test_explicit_compat_wins_field_by_field():
    body, _, flags = body_for(
        compat={"maxTokensField": "max_tokens", "supportsStore": False, "supportsUsageInStreaming": False}
    )
    assert flags["supportsFinishReason"] is True  # untouched defaults stay
    assert "max_tokens" in body and "max_completion_tokens" not in body
    assert "store" not in body and "stream_options" not in body


def test_openai_reasoning_model_uses_developer_role_and_cache_key():
    body, headers, _ = body_for(
        "openai", "https://api.openai.com/v1", reasoning=True, thinking_level="high", session_id="s-1"
    )
    assert body["messages"][0]["role"] == "developer"
    assert body["reasoning_effort"] == "high"
    assert body["prompt_cache_key"] == "s-1"
    assert headers["authorization"] == "Bearer sk-test-key"


def test_local_host_sends_no_cache_key_and_system_role():
    body, _, _ = body_for(reasoning=True, thinking_level="medium", session_id="s-1")
    assert body["messages"][0]["role"] == "system"
    assert "prompt_cache_key" not in body
    assert body["reasoning_effort"] == "medium"


def test_non_reasoning_model_sends_no_thinking_fields():
    body, _, _ = body_for(thinking_level="high")
    assert not {"reasoning_effort", "reasoning", "thinking", "enable_thinking"} & set(body)


def test_deepseek_thinking_and_reasoning_content_on_assistants():
    prior = AssistantMessage(
        api="openai-completions", provider="deepseek", model="qwen3-coder", content=[TextContent(text="hi")]
    )
    ctx = context(messages=[UserMessage(content="a"), prior, UserMessage(content="b")])
    body, _, _ = body_for(
        "deepseek", "https://api.deepseek.com", ctx=ctx, reasoning=True, thinking_level="high"
    )
    assert body["thinking"] == {"type": "enabled"}
    assert body["max_tokens"] == 8192
    assistant = body["messages"][2]
    assert assistant == {"role": "assistant", "content": "hi", "reasoning_content": ""}


def test_openrouter_reasoning_affinity_and_anthropic_cache_control():
    body, headers, _ = body_for(
        "openrouter",
        "https://openrouter.ai/api/v1",
        id="anthropic/claude-sonnet-4.5",
        reasoning=True,
        thinking_level="low",
        session_id="sess-9",
    )
    assert body["reasoning"] == {"effort": "low"}
    assert headers["x-session-id"] == "sess-9"
    system = body["messages"][0]
    assert system["content"] == [
        {"type": "text", "text": "You are a test assistant.", "cache_control": {"type": "ephemeral"}}
    ]
    last = body["messages"][-1]
    assert last["content"][-1]["cache_control"] == {"type": "ephemeral"}


@pytest.mark.parametrize(
    ("fmt", "extra", "expected"),
    [
        ("qwen", {}, {"enable_thinking": True}),
        (
            "qwen-chat-template",
            {},
            {"chat_template_kwargs": {"enable_thinking": True, "preserve_thinking": True}},
        ),
        ("together", {}, {"reasoning": {"enabled": True}}),
        ("zai", {}, {"thinking": {"type": "enabled", "clear_thinking": False}}),
        ("string-thinking", {}, {"thinking": "medium"}),
        (
            "chat-template",
            {
                "chatTemplateKwargs": {
                    "thinking": {"$var": "thinking.enabled"},
                    "effort": {"$var": "thinking.effort"},
                    "budget": {"$var": "thinking.budget"},
                    "literal": "$thinking.enabled",
                }
            },
            {
                "chat_template_kwargs": {
                    "thinking": True,
                    "effort": "medium",
                    "budget": 7168,
                    "literal": "$thinking.enabled",
                }
            },
        ),
        (
            "baseten",
            {"chatTemplateArgs": {"enable_thinking": {"$var": "thinking.enabled"}}},
            {"chat_template_args": {"enable_thinking": True}},
        ),
    ],
)
def test_thinking_formats(fmt, extra, expected):
    body, _, _ = body_for(reasoning=True, thinking_level="medium", compat={"thinkingFormat": fmt, **extra})
    for key, value in expected.items():
        assert body[key] == value
    # these send reasoning_effort beside their own switch when the server takes it (as pi)
    assert ("reasoning_effort" in body) == (fmt in ("baseten", "qwen", "zai", "together"))


def test_chat_template_values_when_thinking_is_off():
    template = {
        "on": {"$var": "thinking.enabled"},
        "effort": {"$var": "thinking.effort"},
        "budget": {"$var": "thinking.budget"},
        "gone": {"$var": "thinking.enabled", "omitWhenOff": True},
        "fixed": 3,
    }
    compat = {"thinkingFormat": "chat-template", "chatTemplateKwargs": template}
    body, _, _ = body_for(reasoning=True, thinking_level="off", compat=compat)
    assert body["chat_template_kwargs"] == {"on": False, "fixed": 3}
    body, _, _ = body_for(reasoning=True, thinking_level="low", compat={"thinkingFormat": "chat-template"})
    assert "chat_template_kwargs" not in body  # no kwargs configured: nothing sent


def test_thinking_off_for_template_servers():
    body, _, _ = body_for(
        reasoning=True, thinking_level="off", compat={"thinkingFormat": "qwen-chat-template"}
    )
    assert body["chat_template_kwargs"] == {"enable_thinking": False, "preserve_thinking": True}


def test_thinking_token_budget_field():
    body, _, _ = body_for(
        reasoning=True,
        thinking_level="low",
        compat={"thinkingFormat": "qwen", "thinkingTokenBudgetField": "thinking_token_budget"},
    )
    assert body["thinking_token_budget"] == 2048
    body, _, _ = body_for(
        reasoning=True, thinking_level="off", compat={"thinkingTokenBudgetField": "thinking_token_budget"}
    )
    assert "thinking_token_budget" not in body


def test_sampling_params_merged_last_and_level_map():
    body, _, _ = body_for(
        reasoning=True,
        thinking_level="minimal",
        thinkingLevelMap={"minimal": "low", "off": "none"},
        samplingParams={"top_p": 0.9, "max_completion_tokens": 100},
        samplingParamsByThinkingLevel={"minimal": {"temperature": 0.2}},
    )
    assert body["reasoning_effort"] == "low"
    assert body["top_p"] == 0.9 and body["max_completion_tokens"] == 100 and body["temperature"] == 0.2
    body, _, _ = body_for(reasoning=True, thinking_level="off", thinkingLevelMap={"off": "none"})
    assert body["reasoning_effort"] == "none"


def test_tool_result_name_bridge_and_thinking_as_text():
    call = ToolCall(id="call_1", name="bash", arguments={"command": "ls"})
    prior = AssistantMessage(
        api="openai-completions",
        provider="local",
        model="qwen3-coder",
        content=[ThinkingContent(thinking="plan", thinking_signature="reasoning"), call],
    )
    ctx = context(
        messages=[
            UserMessage(content="go"),
            prior,
            ToolResultMessage(tool_call_id="call_1", tool_name="bash", content=[TextContent(text="a")]),
            UserMessage(content="next"),
        ]
    )
    body, _, _ = body_for(
        ctx=ctx,
        compat={
            "requiresToolResultName": True,
            "requiresAssistantAfterToolResult": True,
            "requiresThinkingAsText": True,
        },
    )
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert body["messages"][2]["content"] == "plan" and "reasoning" not in body["messages"][2]
    assert body["messages"][3]["name"] == "bash"
    assert body["messages"][4]["content"]  # the bridging assistant message


def test_images_for_vision_models_and_tool_result_images():
    call = ToolCall(id="call_1", name="read", arguments={"path": "a.png"})
    prior = AssistantMessage(api="openai-completions", provider="local", model="qwen3-coder", content=[call])
    ctx = context(
        messages=[
            UserMessage(content=[TextContent(text="look"), ImageContent(data=PNG, mime_type="image/png")]),
            prior,
            ToolResultMessage(
                tool_call_id="call_1",
                tool_name="read",
                content=[ImageContent(data=PNG, mime_type="image/png")],
            ),
        ]
    )
    body, _, _ = body_for(ctx=ctx, input=["text", "image"])
    user = body["messages"][1]
    assert user["content"][1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
    assert body["messages"][3]["content"] == "(see attached image)"
    follow = body["messages"][4]
    assert follow["role"] == "user" and follow["content"][1]["type"] == "image_url"

    body, _, _ = body_for(ctx=ctx, input=["text"])
    assert "image_url" not in str(body["messages"])


def test_empty_assistant_dropped_and_empty_user_parts_skipped():
    empty = AssistantMessage(
        api="openai-completions", provider="local", model="qwen3-coder", content=[TextContent(text="")]
    )
    ctx = context(messages=[UserMessage(content=[TextContent(text="")]), UserMessage(content="real"), empty])
    body, _, _ = body_for(ctx=ctx)
    assert [m["role"] for m in body["messages"]] == ["system", "user"]


def test_mistral_ids_are_nine_alphanumerics():
    foreign = AssistantMessage(
        api="openai-responses",
        provider="openai",
        model="gpt-5",
        content=[ToolCall(id="call_abc|fc_123456789", name="bash", arguments={})],
    )
    ctx = context(
        messages=[
            UserMessage(content="x"),
            foreign,
            ToolResultMessage(
                tool_call_id="call_abc|fc_123456789", tool_name="bash", content=[TextContent(text="ok")]
            ),
        ]
    )
    body, _, _ = body_for("mistral", "https://api.mistral.ai/v1", ctx=ctx)
    call_id = body["messages"][2]["tool_calls"][0]["id"]
    assert len(call_id) == 9 and call_id.isalnum()
    assert body["messages"][3]["tool_call_id"] == call_id and body["messages"][3]["name"] == "bash"
    assert "stream_options" not in body and "store" not in body and body["max_tokens"] == 8192


def test_foreign_responses_ids_become_completions_ids():
    """Reference §3.7: ``call|item`` → sanitised ``call_item`` (≤ 40)."""
    foreign = AssistantMessage(
        api="openai-responses",
        provider="openai",
        model="gpt-5",
        content=[ToolCall(id="call_abc|fc_item+/=", name="bash", arguments={})],
    )
    ctx = context(
        messages=[
            UserMessage(content="x"),
            foreign,
            ToolResultMessage(
                tool_call_id="call_abc|fc_item+/=", tool_name="bash", content=[TextContent(text="ok")]
            ),
        ]
    )
    body, _, _ = body_for(ctx=ctx)
    assert body["messages"][2]["tool_calls"][0]["id"] == "call_abc_fc_item___"
    assert body["messages"][3]["tool_call_id"] == "call_abc_fc_item___"


def test_unpaired_surrogates_are_scrubbed_and_emoji_kept():
    ctx = context(messages=[UserMessage(content="broken \ud800 pair, fine 🎉")])
    body, _, _ = body_for(ctx=ctx)
    assert body["messages"][1]["content"] == "broken  pair, fine 🎉"
