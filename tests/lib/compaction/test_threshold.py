"""Settings, token estimates and the threshold (reference §7.1, §7.2)."""

from __future__ import annotations

import pytest

from pi_host.lib.compaction import (
    CompactionSettings,
    CompactionSettingsError,
    branch_context_tokens,
    estimate_context_tokens,
    estimate_message_tokens,
    resolve_branch_settings,
    resolve_settings,
    should_compact,
)
from pi_host.protocol import (
    AssistantMessage,
    ImageContent,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolDecl,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from tests.support.entries import Chain


class M:
    def __init__(self, provider, model_id):
        self.provider, self.id = provider, model_id


def test_threshold_for_a_200k_model_with_defaults():
    settings = resolve_settings({})
    assert (settings.reserve_tokens, settings.keep_recent_tokens, settings.enabled) == (16384, 20000, True)
    assert should_compact(200000 - 16384 + 1, 200000, settings)
    assert not should_compact(200000 - 16384, 200000, settings)
    assert not should_compact(10**9, 200000, CompactionSettings(enabled=False))
    assert not should_compact(10**9, 0, settings)


def test_model_overrides_fall_back_field_by_field():
    raw = {
        "compaction": {
            "reserveTokens": 1000,
            "modelOverrides": {"faux/faux-small": {"keepRecentTokens": 50}},
        }
    }
    small = resolve_settings(raw, M("faux", "faux-small"))
    assert (small.reserve_tokens, small.keep_recent_tokens) == (1000, 50)
    other = resolve_settings(raw, M("faux", "FAUX-SMALL"))  # keys are case-sensitive
    assert (other.reserve_tokens, other.keep_recent_tokens) == (1000, 20000)


@pytest.mark.parametrize(
    "raw",
    [
        {"compaction": {"reserveTokens": -1}},
        {"compaction": {"keepRecentTokens": 1.5}},
        {"compaction": {"reserveTokens": True}},
        {"compaction": {"enabled": "yes"}},
        {"compaction": {"modelOverrides": {"faux/faux-1": {"reserveTokens": "many"}}}},
        {"compaction": {"reserveTokens": 2**53}},
    ],
)
def test_invalid_values_are_errors_naming_the_key(raw):
    with pytest.raises(CompactionSettingsError) as caught:
        resolve_settings(raw, M("faux", "faux-1"))
    assert "compaction." in str(caught.value)


def test_branch_summary_settings():
    assert resolve_branch_settings({}).reserve_tokens == 16384
    settings = resolve_branch_settings({"branchSummary": {"reserveTokens": 10, "skipPrompt": True}})
    assert (settings.reserve_tokens, settings.skip_prompt) == (10, True)


def test_message_estimates_follow_chars_over_four():
    assert estimate_message_tokens(UserMessage(content="abcde")) == 2
    image = ImageContent(data="AAAA", mime_type="image/png")
    assert estimate_message_tokens(UserMessage(content=[TextContent(text="abcd"), image])) == 1 + 1200
    call = ToolCall(id="1", name="read", arguments={"path": "a"})  # read + {"path":"a"}
    assert estimate_message_tokens(AssistantMessage(content=[call])) == (4 + 12 + 3) // 4
    result = ToolResultMessage(tool_call_id="1", tool_name="read", content=[image])
    assert estimate_message_tokens(result) == 1200
    system = SystemMessage(content="", sections={"preamble": "x" * 8}, tools_added=[ToolDecl(name="t")])
    tools_json = '[{"name":"t","description":"","parameters":{"type":"object","properties":{}}}]'
    assert estimate_message_tokens(system) == -(-(8 + len(tools_json)) // 4)
    # the same numbers from pi's JSON dicts (session entries)
    assert estimate_message_tokens(system.to_json()) == estimate_message_tokens(system)
    assert estimate_message_tokens(result.to_json()) == 1200


def test_context_estimate_uses_the_last_valid_usage():
    usage = Usage(input=900, output=100, total_tokens=1000)
    messages = [
        UserMessage(content="q"),
        AssistantMessage(content=[TextContent(text="a")], usage=usage),
        UserMessage(content="x" * 400),
        AssistantMessage(stop_reason="error", usage=Usage(input=5, total_tokens=5)),
    ]
    assert estimate_context_tokens(messages) == 1000 + 100 + 0
    assert estimate_context_tokens(messages[:1]) == 1  # no usage: pure estimate
    zero = [UserMessage(content="x" * 40), AssistantMessage(content=[TextContent(text="y" * 40)])]
    assert estimate_context_tokens(zero) == 20  # all-zero usage means "unknown"


def test_branch_tokens_ignore_usage_older_than_a_compaction_or_context_edit():
    chain = Chain()
    chain.user("q")
    chain.assistant("a", usage={"input": 5000, "output": 10, "totalTokens": 5010})
    chain.user("x" * 400)
    assert branch_context_tokens(chain.entries, []) == 5010 + 100
    failed = chain.assistant(stop="error")
    chain.add("context_edit", targetId=failed["id"], replacement=None)
    fresh = [UserMessage(content="y" * 80)]
    assert branch_context_tokens(chain.entries, fresh) == 20
    chain.assistant("b", usage={"input": 300, "output": 20, "totalTokens": 0})
    assert branch_context_tokens(chain.entries, fresh) == 320  # sum of parts when total is 0
