"""Protocol models read and write pi's JSON unchanged (reference §1, §6.11, §10.3)."""

from __future__ import annotations

import json

import pytest

from pi_host.protocol import (
    AssistantMessage,
    SystemMessage,
    TextContent,
    TextDeltaEvent,
    ToolCall,
    ToolCallStartEvent,
    UnknownMessage,
    event_to_wire,
    parse_message,
)
from tests.support.paths import SESSION_FIXTURES

# Messages exactly as pi 1.6.0 writes them (reference §6.11 and §10.3).
PI_MESSAGES = [
    '{"role":"system","content":"","sections":{"preamble":"(base instructions)","tools":"<tools>\\n- bash: (snippet)\\n\\nAdditional tools may be available.\\n</tools>","cwd":"<cwd>\\n/home/dev/kite\\n</cwd>"},"toolsAdded":[{"name":"bash","description":"(bash description)","parameters":{"type":"object","required":["command"],"properties":{"command":{"type":"string"},"timeout":{"type":"number"}}}}],"timestamp":1796202843600}',
    '{"role":"user","content":[{"type":"text","text":"How many TODOs are in src/?"}],"timestamp":1796202843599}',
    '{"role":"assistant","content":[{"type":"toolCall","id":"call_7Hq2","name":"bash","arguments":{"command":"grep -rc TODO src | awk -F: \'{s+=$2} END {print s}\'"}}],"api":"openai-completions","provider":"local-vllm","model":"qwen3-coder","usage":{"input":980,"output":31,"cacheRead":0,"cacheWrite":0,"reasoning":0,"totalTokens":1011,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0,"totalFromProvider":false}},"stopReason":"toolUse","timestamp":1796202843612,"rawStopReason":"tool_calls","durationMs":843,"thinkingLevel":"medium"}',
    '{"role":"toolResult","toolCallId":"call_7Hq2","toolName":"bash","content":[{"type":"text","text":"4\\n"}],"isError":false,"durationMs":14,"timestamp":1796202844470}',
    '{"role":"assistant","content":[{"type":"thinking","thinking":"Let me think","thinkingSignature":"reasoning_content"},{"type":"text","text":"src/ contains 4 TODO markers.","textSignature":"msg_1"}],"api":"openai-completions","provider":"local-vllm","model":"qwen3-coder","usage":{"input":1030,"output":9,"cacheRead":0,"cacheWrite":0,"cacheWrite1h":0,"reasoning":0,"totalTokens":1039,"cost":{"input":0.001,"output":0.5,"cacheRead":0,"cacheWrite":0,"total":0.501}},"stopReason":"stop","timestamp":1796202844473,"responseId":"chatcmpl-1","durationMs":547,"thinkingLevel":"medium"}',
    '{"role":"assistant","content":[{"type":"thinking","thinking":"[redacted]","thinkingSignature":"opaque==","redacted":true},{"type":"toolCall","id":"toolu_1","name":"read","arguments":{"path":"a"},"thoughtSignature":"c2ln"}],"api":"anthropic-messages","provider":"anthropic","model":"claude","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"error","timestamp":1,"errorMessage":"boom"}',
    '{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"timestamp":5}',
    '{"role":"bashExecution","command":"ls","output":"a\\n","exitCode":0,"cancelled":false,"truncated":false,"timestamp":7}',
    '{"role":"custom","customType":"note","content":"hello","display":true,"details":{"k":1},"timestamp":8}',
    '{"role":"branchSummary","summary":"went elsewhere","fromId":"abc12345","timestamp":9}',
    '{"role":"compactionSummary","summary":"earlier work","tokensBefore":5000,"timestamp":10}',
    '{"role":"system","content":"","sections":{"addendum":null},"toolsRemoved":[{"name":"write"}],"timestamp":11}',
]


@pytest.mark.parametrize("raw", PI_MESSAGES)
def test_pi_json_round_trips_exactly(raw):
    data = json.loads(raw)
    message = parse_message(data)
    assert message.to_json() == data


def test_typed_access_uses_python_names():
    message = parse_message(json.loads(PI_MESSAGES[2]))
    assert isinstance(message, AssistantMessage)
    assert message.stop_reason == "toolUse"
    assert message.usage.total_tokens == 1011
    assert message.usage.cost.total_from_provider is False
    call = message.tool_calls()[0]
    assert isinstance(call, ToolCall) and call.arguments["command"].startswith("grep")


def test_unknown_roles_and_fields_survive():
    raw = {"role": "hologram", "timestamp": 3, "payload": {"x": [1, 2]}}
    message = parse_message(raw)
    assert isinstance(message, UnknownMessage)
    assert message.to_json() == raw
    extra = json.loads(PI_MESSAGES[1])
    extra["futureField"] = {"nested": True}
    assert parse_message(extra).to_json() == extra


def test_v2_hook_message_role_loads_as_custom():
    message = parse_message(
        {"role": "hookMessage", "customType": "x", "content": "hi", "display": False, "timestamp": 1}
    )
    assert message.role == "custom"
    assert message.to_json()["role"] == "custom"


def test_null_content_is_normalised():
    assert parse_message({"role": "user", "content": None, "timestamp": 1}).content == ""
    assistant = parse_message(
        {
            "role": "assistant",
            "content": None,
            "api": "a",
            "provider": "p",
            "model": "m",
            "stopReason": "stop",
            "timestamp": 1,
        }
    )
    assert assistant.content == []


def test_system_message_sections_keep_nulls_for_deletion():
    message = parse_message(json.loads(PI_MESSAGES[-1]))
    assert isinstance(message, SystemMessage)
    assert message.sections == {"addendum": None}
    assert message.to_json()["sections"] == {"addendum": None}


def test_integer_costs_stay_integers():
    data = json.loads(PI_MESSAGES[2])
    dumped = json.dumps(parse_message(data).to_json())
    assert '"cost": {"input": 0, "output": 0' in dumped


def test_wire_events_strip_partial_and_name_tool_calls():
    partial = AssistantMessage(api="x", provider="p", model="m", stop_reason="pending")
    partial.content.append(ToolCall(id="call_a1", name="read", arguments={}))
    start = event_to_wire(ToolCallStartEvent(content_index=0, partial=partial))
    assert start == {"type": "toolcall_start", "contentIndex": 0, "id": "call_a1", "toolName": "read"}
    partial.content.append(TextContent(text="hi"))
    delta = event_to_wire(TextDeltaEvent(content_index=1, delta="hi", partial=partial))
    assert delta == {"type": "text_delta", "contentIndex": 1, "delta": "hi"}


FIXTURES = SESSION_FIXTURES


def _pi_written_messages():
    for path in sorted(FIXTURES.glob("pi_*.jsonl")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            entry = json.loads(line)
            if entry.get("type") == "message":
                yield pytest.param(entry["message"], id=f"{path.stem}:{number}")


@pytest.mark.parametrize("data", list(_pi_written_messages()))
def test_messages_from_session_files_written_by_pi_round_trip(data):
    """Every message in the session files pi 1.6.0 wrote (tests/fixtures/sessions) survives."""
    assert parse_message(data).to_json() == data
