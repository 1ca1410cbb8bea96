"""``pi -p`` with an Amazon Bedrock model end to end: AWS keys in the environment, SigV4-signed
requests to a loopback server speaking ConverseStream (AWS event-stream framing); the model
calls ``read``, the tool runs, its result goes back as a ``toolResult``, the model answers."""

from __future__ import annotations

import json

from tests.support.pi import run_pi
from tests.support.providers import eventstream
from tests.support.providers.sse import Reply, SSEServer

ANSWER = "main.py prints hello."


def converse(raw: bytes) -> Reply:
    return Reply(headers={"content-type": "application/vnd.amazon.eventstream"}, parts=[raw[:97], raw[97:]])


def test_bedrock_sigv4_tool_round_trip(isolated_environment):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    (work / "main.py").write_text("print('hello from main')\n")
    with SSEServer() as server:
        (agent / "models.json").write_text(
            json.dumps({"providers": {"amazon-bedrock": {"baseUrl": server.url}}})
        )
        server.enqueue(
            converse(eventstream.converse_tool_call_stream()),
            converse(eventstream.converse_text_stream(ANSWER)),
        )
        env = {
            "AWS_ACCESS_KEY_ID": "AKIDE2ELOOPBACK",
            "AWS_SECRET_ACCESS_KEY": "e2e-secret-access-key-0123456789",
            "AWS_REGION": "us-west-2",
            "AWS_EC2_METADATA_DISABLED": "true",
        }
        result = run_pi(
            "-p", "--no-session", "--model", "amazon-bedrock/us.anthropic.claude-opus-5-5", "Read main.py",
            cwd=work, env=env, drop=lambda name: name.startswith("AWS_") and name not in env,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == ANSWER
        first, second = server.requests
        assert first.path == second.path == "/model/us.anthropic.claude-opus-5-5/converse-stream"
        assert "/us-west-2/bedrock/aws4_request" in second.headers["authorization"]
        results = [c["toolResult"] for c in second.json["messages"][-1]["content"] if "toolResult" in c]
        assert results[0]["toolUseId"] == "tooluse_abc123" and results[0]["status"] == "success"
        assert "hello from main" in results[0]["content"][0]["text"]
        assert "e2e-secret-access-key" not in result.stderr + result.stdout
