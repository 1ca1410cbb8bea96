"""``pi -p`` and ``pi --mode json`` end to end with anthropic-messages against the loopback server:
the model calls ``read`` on a real file, the tool runs, the result goes back, the model answers.
Also: no key configured gives one clear line; ``--list-models``."""

from __future__ import annotations

import json

from tests.plugins.pi_provider_anthropic.test_session import answer_turn
from tests.support.pi import run_pi
from tests.support.providers.sse import Reply, sse_events

ANSWER = "The file says: hello from the real file"


def read_turn() -> str:
    args = json.dumps({"path": "notes.txt"})
    events = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_r",
                    "model": "claude-local",
                    "usage": {"input_tokens": 9, "output_tokens": 1},
                },
            },
        ),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "tool_use", "id": "toolu_read", "name": "read", "input": {}},
            },
        ),
    ]
    events += [
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": args[i : i + 3]},
            },
        )
        for i in range(0, len(args), 3)
    ]
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}},
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return sse_events(events)


def setup(sse_server, env) -> None:
    (env["agent"] / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "local-claude": {
                        "baseUrl": sse_server.url,
                        "api": "anthropic-messages",
                        "apiKey": "dummy",
                        "models": [{"id": "claude-local", "reasoning": True}],
                    }
                }
            }
        )
    )
    (env["work"] / "notes.txt").write_text("hello from the real file\n")
    sse_server.enqueue(Reply.sse(read_turn(), chunk_size=11), Reply.sse(answer_turn(ANSWER), chunk_size=11))


def credential(name: str) -> bool:
    """The variables left out of pi's environment: no key or Anthropic setting but the test's own."""
    return name.endswith("_API_KEY") or name.startswith("ANTHROPIC_")


def test_print_mode_tool_round_trip(sse_server, isolated_environment):
    setup(sse_server, isolated_environment)
    result = run_pi(
        "-p",
        "--no-session",
        "--model",
        "local-claude/claude-local",
        "What does notes.txt say?",
        cwd=isolated_environment["work"],
        drop=credential,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ANSWER
    second = sse_server.requests[1].json
    tool_result = second["messages"][-1]["content"][0]
    assert tool_result["type"] == "tool_result" and tool_result["tool_use_id"] == "toolu_read"
    assert "hello from the real file" in tool_result["content"]
    assert sse_server.requests[0].json["thinking"]["type"] == "enabled"


def test_json_mode_events(sse_server, isolated_environment):
    setup(sse_server, isolated_environment)
    result = run_pi(
        "--mode",
        "json",
        "--no-session",
        "--model",
        "local-claude/claude-local:low",
        "What does notes.txt say?",
        cwd=isolated_environment["work"],
        drop=credential,
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    updates = [e["assistantMessageEvent"] for e in events if e["type"] == "message_update"]
    start = next(u for u in updates if u["type"] == "toolcall_start")
    assert (start["id"], start["toolName"]) == ("toolu_read", "read")
    assert sum(1 for u in updates if u["type"] == "toolcall_delta") >= 5
    assert all("partial" not in u for u in updates)
    ends = [
        e["message"] for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"
    ]
    assert [m["stopReason"] for m in ends] == ["toolUse", "stop"]
    assert ends[-1]["content"][0]["text"] == ANSWER
    assert sse_server.requests[0].json["thinking"]["budget_tokens"] == 2048  # the :low suffix
    assert "dummy" not in result.stdout  # the key never reaches the event stream


def test_without_a_key_one_clear_line(isolated_environment):
    result = run_pi(
        "-p",
        "--no-session",
        "--model",
        "anthropic/claude-opus-4-8",
        "hi",
        cwd=isolated_environment["work"],
        drop=credential,
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "ANTHROPIC_API_KEY" in lines[0] and "auth.json" in lines[0]
    result = run_pi(
        "--list-models",
        "opus-4-8",
        cwd=isolated_environment["work"],
        env={"ANTHROPIC_API_KEY": "x"},
        drop=credential,
    )
    assert result.returncode == 0
    assert "claude-opus-4-8" in result.stdout
