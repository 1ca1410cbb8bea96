"""``pi -p`` with a Radius model end to end, against the loopback Radius gateway
(tests/support/providers/radius.py) speaking pi-messages: the key from ``RADIUS_API_KEY``, the
gateway from a models.json ``baseUrl`` override. The model calls ``ls``, the tool runs, its result
goes back in pi's JSON, the model answers. Every request is compared with the one pi 1.6.0 sent in
the same run (recorded by ``python -m tests.support.providers.pi_radius``)."""

from __future__ import annotations

import json
import time

import pytest

from tests.support.pi import run_pi
from tests.support.providers.pi_radius import CASES, RECORDED, arguments, normalize, prepare, turns
from tests.support.providers.radius import KEY, RadiusGateway, text_turn, tool_call_turn

PI_REQUESTS = json.loads(RECORDED.read_text(encoding="utf-8"))


def test_radius_streams_a_tool_call_and_answers(isolated_environment):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    with RadiusGateway() as gateway:
        prepare(agent, work, gateway)
        gateway.turns = [tool_call_turn("ls", {"path": "."}), text_turn("The directory holds main.py.")]
        result = run_pi(
            "--mode", "json", "--no-session", "--model", "radius/kimi-k3", "--tools", "ls", "List files",
            cwd=work, env={"RADIUS_API_KEY": KEY},
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        events = [json.loads(line) for line in result.stdout.splitlines()]
        ends = [
            e["message"] for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"
        ]
        first, last = ends
        assert first["stopReason"] == "toolUse" and first["api"] == "pi-messages"
        assert first["content"][2] == {
            "type": "toolCall",
            "id": "call_radius_1",
            "name": "ls",
            "arguments": {"path": "."},
        }
        assert first["content"][0]["thinkingSignature"] == "sig-1"
        assert first["usage"]["cost"]["total"] == 0.000822  # the gateway's price, as reported
        assert last["content"] == [{"type": "text", "text": "The directory holds main.py."}]
        assert last["responseModel"] == "upstream-1"
        results = [
            e["message"]
            for e in events
            if e["type"] == "message_end" and e["message"]["role"] == "toolResult"
        ]
        assert results[0]["toolCallId"] == "call_radius_1" and "main.py" in results[0]["content"][0]["text"]
        second = gateway.messages()[1].json()
        assert [m["role"] for m in second["context"]["messages"]] == [
            "system",
            "user",
            "assistant",
            "toolResult",
        ]
        assert second["context"]["messages"][3]["content"] == results[0]["content"]
        assert KEY not in result.stderr


def test_a_stored_radius_login_is_sent_as_the_bearer_token(isolated_environment):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    entry = {"type": "oauth", "access": "radius-access-stored", "refresh": "radius-refresh-stored",
             "expires": int(time.time() * 1000) + 3_600_000, "scope": "gateway offline_access"}  # fmt: skip
    (agent / "auth.json").write_text(json.dumps({"radius": entry}))
    with RadiusGateway() as gateway:
        prepare(agent, work, gateway)
        gateway.turns = [text_turn("Signed in.")]
        result = run_pi("-p", "--no-session", "--model", "radius/cheap", "hello", cwd=work)
        assert (result.returncode, result.stdout) == (0, "Signed in.\n"), result.stderr
        assert gateway.messages()[0].headers["authorization"] == "Bearer radius-access-stored"


def test_a_refused_request_is_one_line_in_pis_words(isolated_environment):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    with RadiusGateway() as gateway:
        prepare(agent, work, gateway)
        gateway.turns = [(401, {"error": {"message": f"invalid key {KEY}", "code": "invalid_api_key"}})]
        result = run_pi(
            "-p", "--no-session", "--model", "radius/cheap", "hello", cwd=work, env={"RADIUS_API_KEY": KEY}
        )
        assert result.returncode == 1 and result.stdout == ""
        (line,) = result.stderr.splitlines()
        assert line.startswith("pi: 401 Unauthorized: invalid key ") and line.endswith("(invalid_api_key)")
        assert KEY not in result.stderr


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_requests_match_pi_1_6_0(case, isolated_environment):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    with RadiusGateway() as gateway:
        prepare(agent, work, gateway)
        gateway.turns = turns(case)
        env = {"RADIUS_API_KEY": KEY, **case.get("env", {})}
        result = run_pi(*arguments(case), cwd=work, env=env)
        assert result.returncode == 0, result.stderr
        mine = [normalize(r.method, r.path, r.headers, r.json()) for r in gateway.messages()]
    assert mine == PI_REQUESTS[case["name"]]
