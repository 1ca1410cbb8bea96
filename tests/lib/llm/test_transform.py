"""Cross-model transform (reference §3.7; §11 items 12-15), overflow (§3.9) and retry classes (§3.8)."""

from __future__ import annotations

import pytest

from pi_host.lib.llm.tokens import (
    apply_budget,
    clamp_max_tokens,
    clamp_thinking_level,
    supported_levels,
    thinking_budget,
)
from pi_host.lib.llm.transform import (
    IMAGE_PLACEHOLDER,
    normalize_anthropic_id,
    normalize_completions_id,
    normalize_google_id,
    normalize_responses_id,
    scrub_surrogates,
    transform_messages,
)
from pi_host.protocol import (
    AssistantMessage,
    ImageContent,
    Model,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pi_host.protocol.failures import is_context_overflow, is_recoverable_length_stop, is_retryable_error

CLAUDE = Model(id="claude-x", provider="anthropic", api="anthropic-messages", input=["text", "image"])
TEXT_ONLY = Model(id="local", provider="local", api="openai-completions", input=["text"])


def assistant(provider="openai", api="openai-responses", model="gpt-x", content=None, stop="toolUse"):
    return AssistantMessage(provider=provider, api=api, model=model, content=content or [], stop_reason=stop)


def test_foreign_thinking_dropped_signatures_removed_ids_normalised():
    source = assistant(
        content=[
            ThinkingContent(thinking="secret", thinking_signature="enc"),
            TextContent(text="hi", text_signature="msg_1"),
            ToolCall(id="call_abc|item+/=", name="read", arguments={}, thought_signature="ts"),
        ]
    )
    result = ToolResultMessage(
        tool_call_id="call_abc|item+/=", tool_name="read", content=[TextContent(text="ok")]
    )
    out = transform_messages([UserMessage(content="q"), source, result], CLAUDE)
    moved = out[1]
    assert [b.type for b in moved.content] == ["text", "toolCall"]
    assert moved.content[0].text_signature is None
    assert moved.content[1].id == "call_abc_item___"
    assert moved.content[1].thought_signature is None
    assert out[2].tool_call_id == "call_abc_item___"
    # the originals are untouched
    assert source.content[2].id == "call_abc|item+/=" and result.tool_call_id == "call_abc|item+/="
    assert source.content[0].thinking == "secret"


def test_same_model_thinking_rules():
    same = assistant(
        provider="anthropic",
        api="anthropic-messages",
        model="claude-x",
        stop="stop",
        content=[
            ThinkingContent(thinking="", thinking_signature="sig"),
            ThinkingContent(thinking="", redacted=True, thinking_signature="opaque"),
            ThinkingContent(thinking="  "),
            ThinkingContent(thinking="unsigned but real"),
            ToolCall(id="weird|id", name="t", arguments={}),
        ],
    )
    out = transform_messages([same], CLAUDE)[0]
    assert [b.thinking for b in out.content if b.type == "thinking"] == ["", "", "unsigned but real"]
    assert out.content[-1].id == "weird|id"  # same model: ids kept


def test_errored_and_aborted_assistants_removed():
    messages = [
        UserMessage(content="q"),
        assistant(stop="error", content=[TextContent(text="half")]),
        assistant(stop="aborted", content=[TextContent(text="cut")]),
        UserMessage(content="again"),
    ]
    out = transform_messages(messages, CLAUDE)
    assert [m.role for m in out] == ["user", "user"]


def test_orphans_get_synthetic_results_and_system_messages_wait():
    call_a = ToolCall(id="a", name="read", arguments={})
    call_b = ToolCall(id="b", name="bash", arguments={})
    messages = [
        UserMessage(content="q"),
        assistant(content=[call_a, call_b]),
        SystemMessage(content="patch"),
        ToolResultMessage(tool_call_id="a", tool_name="read", content=[TextContent(text="A")]),
        UserMessage(content="next"),
        assistant(content=[ToolCall(id="c", name="read", arguments={})]),
    ]
    out = transform_messages(messages, TEXT_ONLY, normalize=None)
    roles = [(m.role, getattr(m, "tool_call_id", None)) for m in out]
    assert roles == [
        ("user", None),
        ("assistant", None),
        ("toolResult", "a"),
        ("toolResult", "b"),
        ("system", None),
        ("user", None),
        ("assistant", None),
        ("toolResult", "c"),
    ]
    assert out[3].is_error and out[3].tool_name == "bash"
    assert out[7].is_error


def test_images_replaced_for_text_only_models():
    img = ImageContent(data="AAAA", mime_type="image/png")
    messages = [
        UserMessage(content=[TextContent(text="see"), img, img, TextContent(text="and"), img]),
        assistant(content=[ToolCall(id="x", name="read", arguments={})]),
        ToolResultMessage(tool_call_id="x", tool_name="read", content=[img]),
    ]
    out = transform_messages(messages, TEXT_ONLY)
    assert [b.text for b in out[0].content] == ["see", IMAGE_PLACEHOLDER, "and", IMAGE_PLACEHOLDER]
    assert [b.text for b in out[2].content] == [IMAGE_PLACEHOLDER]
    assert transform_messages(messages, CLAUDE)[0].content[1].type == "image"


def test_id_normalisers():
    assert normalize_anthropic_id("call_abc|item+/=") == "call_abc_item___"
    assert len(normalize_anthropic_id("x" * 100)) == 64
    short = normalize_completions_id("call_1|fc_2")
    assert short == "call_1_fc_2"
    long = normalize_completions_id("call_" + "a" * 40 + "|fc_" + "b" * 40)
    assert len(long) <= 40 and long.startswith("call_")
    assert normalize_completions_id("x" * 50, Model(id="g", provider="openai")) == "x" * 40
    assert normalize_completions_id("x" * 50, Model(id="g", provider="groq")) == "x" * 50
    responses = normalize_responses_id("toolu_01|weird")
    call, item = responses.split("|")
    assert call == "toolu_01" and item.startswith("fc_")
    assert normalize_responses_id("call_1|fc_abc") == "call_1|fc_abc"
    assert normalize_google_id("a|b", Model(id="gemini-3-pro")) == "a_b"
    assert normalize_google_id("a|b", Model(id="gemini-2.5-pro")) == "a|b"


def test_scrub_surrogates_keeps_real_emoji():
    assert scrub_surrogates("ok 🎉 \ud800x") == "ok 🎉 x"


# --- overflow and retry ----------------------------------------------------------------------------


def err(text, provider="anthropic"):
    return AssistantMessage(stop_reason="error", error_message=text, provider=provider)


@pytest.mark.parametrize(
    "text",
    [
        "400 invalid_request_error: prompt is too long: 210000 tokens > 200000 maximum",
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens",
        "the request exceeds the available context size, try increasing it",
        "Trying to keep the first 9000 tokens when context the overflows. However, the model is loaded with context length of 8192, which is greater than the context length",
        "prompt too long; exceeded max context length by 100 tokens",
        "413 Request Entity Too Large",
        "context_length_exceeded",
    ],
)
def test_overflow_phrases(text):
    assert is_context_overflow(err(text))
    assert not is_retryable_error(err(text))


def test_rate_limit_is_not_overflow():
    message = err("429 rate limit reached: too many tokens per minute")
    assert not is_context_overflow(message)
    assert is_retryable_error(message)


def test_silent_overflow_from_usage():
    stop = AssistantMessage(stop_reason="stop", usage=Usage(input=190_000, cache_read=20_000))
    assert is_context_overflow(stop, 200_000)
    assert not is_context_overflow(stop)
    truncated = AssistantMessage(stop_reason="length", usage=Usage(input=199_000, output=0))
    assert is_context_overflow(truncated, 200_000)
    model = Model(id="m", max_tokens=1000)
    assert is_recoverable_length_stop(AssistantMessage(stop_reason="length", usage=Usage(output=500)), model)
    assert not is_recoverable_length_stop(
        AssistantMessage(stop_reason="length", usage=Usage(output=1000)), model
    )


@pytest.mark.parametrize(
    ("text", "retry"),
    [
        ("503 service unavailable", True),
        ("529 overloaded_error: Overloaded", True),
        ("Connection lost: peer closed connection", True),
        ("Request timed out: no data received", True),
        ("fetch failed", True),
        ("ECONNRESET", True),
        ("Anthropic stream ended before message_stop", True),
        ("429 insufficient_quota: You exceeded your current quota", False),
        ("billing hard limit reached", False),
        ("400 invalid_request_error: bad tool schema", False),
        ("401 authentication_error: invalid x-api-key", False),
    ],
)
def test_transient_classification(text, retry):
    assert is_retryable_error(err(text)) is retry


# --- tokens -----------------------------------------------------------------------------------------


def test_max_tokens_clamped_to_context():
    model = Model(id="m", context_window=200_000, max_tokens=64_000)
    assert clamp_max_tokens(model, [UserMessage(content="hi")]) == 64_000
    big = AssistantMessage(stop_reason="stop", usage=Usage(input=150_000, output=1000, total_tokens=151_000))
    cap = clamp_max_tokens(model, [UserMessage(content="q"), big, UserMessage(content="x" * 3500)])
    used = 151_000 + 1000
    margin = max(4096, -(-15 * used // 100))
    room = 200_000 - used - margin
    assert cap == min(32768, 200_000 - used - 4096) if room < 32768 else room
    assert clamp_max_tokens(model, [], requested=1000) == 1000
    tiny = Model(id="t", context_window=8000, max_tokens=8000)
    assert clamp_max_tokens(tiny, [UserMessage(content="x" * 35000)]) == 1


def test_thinking_levels_and_budgets():
    plain = Model(id="p", reasoning=False)
    assert supported_levels(plain) == ["off"]
    assert clamp_thinking_level(plain, "high") == "off"
    reasoner = Model(id="r", reasoning=True)
    assert clamp_thinking_level(reasoner, "xhigh") == "high"
    maxed = Model(id="r", reasoning=True, thinking_level_map={"off": None, "minimal": None, "max": "max"})
    assert clamp_thinking_level(maxed, "off") == "low"
    assert clamp_thinking_level(maxed, "max") == "max"
    assert [thinking_budget(x) for x in ("minimal", "low", "medium", "high", "xhigh")] == [
        1024,
        2048,
        8192,
        16384,
        16384,
    ]
    assert thinking_budget("medium", {"medium": 5000}) == 5000
    assert apply_budget(16384, 8192, 16384) == (16384, 8192)
    assert apply_budget(2000, 16384, 4096) == (4096, 3072)
    assert apply_budget(100, 500, 600) == (600, 0)
