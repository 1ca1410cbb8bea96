"""``pi -p`` end to end against loopback servers: a models.json provider per API points at the demo
server; the model calls ``read`` on a real file, the tool runs, the result goes back, the model
answers. Print and JSON modes."""

from __future__ import annotations

import json

import pytest

from tests.support.pi import run_pi
from tests.support.providers.demo import ANSWER, models_json

MODELS = {
    "openai-completions": "loop-completions/demo-chat",
    "openai-responses": "loop-responses/demo-resp",
    "google-generative-ai": "loop-google/gemini-demo",
}


@pytest.fixture
def workspace(demo, isolated_environment):
    (isolated_environment["agent"] / "models.json").write_text(json.dumps(models_json(demo.url)))
    (isolated_environment["work"] / "notes.txt").write_text("hello from the real file\n")
    demo.requests.clear()
    return isolated_environment


def api_key(name: str) -> bool:
    """The variables left out of pi's environment: the keys are in models.json."""
    return name.endswith("_API_KEY")


@pytest.mark.parametrize("api", list(MODELS))
def test_print_mode_tool_round_trip(demo, workspace, api):
    result = run_pi(
        "-p",
        "--no-session",
        "--model",
        MODELS[api],
        "What does notes.txt say?",
        cwd=workspace["work"],
        drop=api_key,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ANSWER
    assert len(demo.requests) == 2
    # The second request carries the real tool output back to the model.
    assert "hello from the real file" in demo.requests[1].body.decode()


def test_json_mode_events(demo, workspace):
    result = run_pi(
        "--mode",
        "json",
        "--no-session",
        "--model",
        MODELS["openai-responses"],
        "What does notes.txt say?",
        cwd=workspace["work"],
        drop=api_key,
    )
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [r["type"] for r in records]
    assert kinds[0] == "session" and kinds[-1] == "agent_settled"
    updates = [r["assistantMessageEvent"] for r in records if r["type"] == "message_update"]
    start = next(u for u in updates if u["type"] == "toolcall_start")
    assert start["toolName"] == "read" and start["id"] == "call_demo1|fc_demo1"
    assert all("partial" not in u for u in updates)
    ends = [
        r["message"] for r in records if r["type"] == "message_end" and r["message"]["role"] == "assistant"
    ]
    assert [m["stopReason"] for m in ends] == ["toolUse", "stop"]
    assert ends[-1]["content"][0]["text"] == ANSWER
    assert ends[-1]["usage"]["input"] == 80 and ends[-1]["api"] == "openai-responses"
    result_end = next(r for r in records if r["type"] == "tool_execution_end")
    assert "hello from the real file" in json.dumps(result_end["result"])
