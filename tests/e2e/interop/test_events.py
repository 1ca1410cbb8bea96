"""Event order of automatic retry and automatic compaction, pi 1.6.0 against pi-host: both run the
same scripted conversation in ``--mode rpc`` against their own loopback server (skipped when pi
is not installed; see ``pi_node.py``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.loopback import LoopbackServer, Reply, write_models_json
from tests.support.pi_node import PiRpc, find_pi

PI = find_pi()
PI_HOST = (sys.executable, str(Path(sys.executable).with_name("pi")))
NOISE = {"message_update", "tool_execution_update", "response"}

needs_pi = pytest.mark.skipif(PI is None, reason="pi 1.6.0 (node) is not installed under .tools/")


def _overloaded() -> Reply:
    return Reply(status=503, error="overloaded")


def _run(
    program: tuple[str, str],
    extra: list[str],
    base: Path,
    script: list[Reply],
    settings: dict[str, Any],
    prompts: list[str],
) -> tuple[list[dict[str, Any]], int]:
    """The events (without deltas and responses) and the number of requests the server saw."""
    agent, work = base / "agent", base / "work"
    work.mkdir(parents=True)
    with LoopbackServer(script) as server:
        write_models_json(agent, server.url)
        (agent / "settings.json").write_text(json.dumps(settings))
        rpc = PiRpc(program, [*extra, "--model", "loop/loop-1", "--no-session"], str(work), str(agent))
        try:
            for prompt in prompts:
                rpc.command({"type": "prompt", "message": prompt}, wait_settled=True)
        finally:
            rpc.close()
        requests = len(server.requests)
    return [e for e in rpc.events if e["type"] not in NOISE], requests


def _both(tmp_path: Path, script: list[Reply], settings: dict[str, Any], prompts: list[str]):
    assert PI is not None
    theirs = _run(PI, ["--no-extensions"], tmp_path / "pi", list(script), settings, prompts)
    ours = _run(PI_HOST, [], tmp_path / "pi-host", list(script), settings, prompts)
    return theirs, ours


def _types(found: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in found]


def _retry_shape(found: list[dict[str, Any]]) -> list[Any]:
    """Each retry event with its fields and the event before it."""
    shape = []
    for index, event in enumerate(found):
        if event["type"].startswith("auto_retry") or event["type"] == "entry_appended":
            before = found[index - 1]
            role = before["message"]["role"] if "message" in before else None
            fields = {k: v for k, v in event.items() if k in ("attempt", "maxAttempts", "delayMs", "success")}
            if event["type"] == "entry_appended":
                fields = {"entryType": event["entry"]["type"], "replacement": event["entry"]["replacement"]}
            shape.append((event["type"], fields, before["type"], role, before.get("willRetry")))
    return shape


def _tool_turns(count: int) -> list[Reply]:
    """One 503 before every answer of a ``count``-turn run (tool calls, then a text answer)."""
    script = []
    for turn in range(count):
        answer = (
            Reply(text="all done") if turn == count - 1 else Reply.tool("bash", {"command": f"echo {turn}"})
        )
        script += [_overloaded(), answer]
    return script


FAST_RETRY = {"retry": {"baseDelayMs": 5}}


@needs_pi
def test_a_503_in_each_of_four_turns_is_attempt_one_each_time_as_in_pi(tmp_path):
    """Script [503, ok] × 4 in one run: every fault is attempt 1 again, both finish."""
    (theirs, pi_requests), (ours, host_requests) = _both(tmp_path, _tool_turns(4), FAST_RETRY, ["go"])
    assert pi_requests == host_requests == 8
    assert _types(ours) == _types(theirs)
    assert _retry_shape(ours) == _retry_shape(theirs)
    # pi's order: agent_end {willRetry} → auto_retry_start → entry_appended (the context_edit);
    # the answer's message_end → auto_retry_end {success} before its turn_end; one agent_settled
    assert _retry_shape(theirs) == 4 * [
        ("auto_retry_start", {"attempt": 1, "maxAttempts": 3, "delayMs": 5}, "agent_end", None, True),
        (
            "entry_appended",
            {"entryType": "context_edit", "replacement": None},
            "auto_retry_start",
            None,
            None,
        ),
        ("auto_retry_end", {"attempt": 1, "success": True}, "message_end", "assistant", None),
    ]
    for found in (theirs, ours):
        answers = [
            e["message"]["stopReason"]
            for e in found
            if e["type"] == "message_end" and e["message"]["role"] == "assistant"
        ]
        assert answers.count("error") == 4
        assert [a for a in answers if a != "error"] == ["toolUse", "toolUse", "toolUse", "stop"]
        assert _types(found)[-2:] == ["agent_end", "agent_settled"]
        assert found[-2]["willRetry"] is False and found[-1]["aborted"] is False
        ends = [i for i, e in enumerate(found) if e["type"] == "auto_retry_end"]
        assert all(_types(found)[i + 1] in ("turn_end", "tool_execution_start") for i in ends)


@needs_pi
def test_a_503_in_each_of_four_prompts_as_in_pi(tmp_path):
    script = [r for turn in range(4) for r in (_overloaded(), Reply(text=f"answer {turn}"))]
    prompts = [f"question {n}" for n in range(4)]
    (theirs, pi_requests), (ours, host_requests) = _both(tmp_path, script, FAST_RETRY, prompts)
    assert pi_requests == host_requests == 8
    assert _types(ours) == _types(theirs)
    assert _retry_shape(ours) == _retry_shape(theirs)
    assert _types(theirs).count("agent_settled") == 4


@needs_pi
def test_retries_used_up_end_after_agent_end_as_in_pi(tmp_path):
    """Four 503s with three retries: ``auto_retry_end {success: false}`` after the last
    ``agent_end``, then ``agent_settled``."""
    script = [_overloaded() for _ in range(4)]
    (theirs, _), (ours, _) = _both(tmp_path, script, FAST_RETRY, ["go"])
    assert _types(ours) == _types(theirs)
    assert _retry_shape(ours) == _retry_shape(theirs)
    assert _types(theirs)[-3:] == ["agent_end", "auto_retry_end", "agent_settled"]
    for found in (theirs, ours):
        assert found[-2]["success"] is False and found[-2]["attempt"] == 3 and found[-2]["finalError"]


@needs_pi
def test_no_compaction_events_when_there_is_nothing_to_compact_as_in_pi(tmp_path):
    """The threshold is crossed at once (reserve almost the whole window) but a one-prompt
    session has nothing to cut: pi attempts no compaction, so no compaction_start/_end pair."""
    script = [
        Reply.tool("bash", {"command": "echo a"}),
        Reply.tool("bash", {"command": "echo b"}),
        Reply("ok"),
    ]
    settings = {**FAST_RETRY, "compaction": {"reserveTokens": 127_500}}
    (theirs, _), (ours, _) = _both(tmp_path, script, settings, ["go"])
    assert _types(ours) == _types(theirs)
    assert not [t for t in _types(theirs) if t.startswith("compaction")]
