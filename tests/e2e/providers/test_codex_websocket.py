"""The Codex backend over its WebSocket, as pi 1.6.0 talks to it, with the real ``pi`` and an
``openai-codex`` login against the loopback server (tests/support/oauth_server.py with a
tests/support/codex_socket.py script): the answer and its tool call come over the socket, the
session's second request reuses it with only the new input after ``previous_response_id``; a
refused upgrade puts the answer on SSE with a ``provider_transport_failure`` diagnostic, and
the session's next request goes straight to SSE. When pi 1.6.0 can open WebSockets here, its
first message is compared with pi-host's."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from tests.support.codex_socket import SocketScript
from tests.support.oauth_server import ACCOUNT, AuthServer
from tests.support.pi import run_pi
from tests.support.pi_node import find_pi, run_print

MODEL = "openai-codex/gpt-5.6-sol"
BROWSER = shlex.join(
    [sys.executable, "-c", "import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()"]
)


def _login(server: AuthServer, agent: Path, work: Path) -> dict[str, str]:
    env = {"PI_HOST_OAUTH_ORIGIN": server.url, "PI_HOST_OAUTH_CALLBACK_PORT": "0", "BROWSER": BROWSER + " %s"}
    done = run_pi("auth", "login", "openai-codex", stdin=None, env=env, cwd=work, timeout=30)
    assert done.returncode == 0, done.stderr
    (agent / "models.json").write_text(json.dumps({"providers": {"openai-codex": {"baseUrl": server.url}}}))
    (work / "a.txt").write_text("alpha\n")
    return env


def _assistants(agent: Path) -> list[dict[str, Any]]:
    (session,) = list((agent / "sessions").rglob("*.jsonl"))
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    return [
        e["message"] for e in entries if e.get("type") == "message" and e["message"]["role"] == "assistant"
    ]


def _session_id(agent: Path) -> str:
    (session,) = list((agent / "sessions").rglob("*.jsonl"))
    return json.loads(session.read_text().splitlines()[0])["id"]


def test_the_answer_and_its_tool_call_come_over_one_reused_websocket(isolated_environment):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    script = SocketScript()
    with AuthServer(websocket=script) as server:
        env = _login(server, agent, work)
        done = run_pi("-p", "--model", MODEL, "read a.txt", env=env, cwd=work)
    assert done.returncode == 0 and done.stdout.strip() == "Done reading.", done.stderr
    assert not [r for r in server.requests if r.path == "/codex/responses"]  # no SSE request
    (upgrade,) = server.upgrades  # one socket for both requests of the session
    session = _session_id(agent)
    access = json.loads((agent / "auth.json").read_text())["openai-codex"]["access"]
    headers = upgrade.headers
    assert headers["openai-beta"] == "responses_websockets=2026-02-06"
    assert headers["authorization"] == f"Bearer {access}" and headers["chatgpt-account-id"] == ACCOUNT
    assert (
        headers["originator"] == "pi" and headers["session-id"] == headers["x-client-request-id"] == session
    )
    assert "accept" not in headers and "content-type" not in headers
    (first_conn, first), (second_conn, second) = script.messages
    assert first_conn == second_conn == 1
    assert first["type"] == "response.create" and first["model"] == "gpt-5.6-sol"
    assert first["store"] is False and first["stream"] is True and first["prompt_cache_key"] == session
    assert "previous_response_id" not in first and first["input"][-1]["content"][0]["text"] == "read a.txt"
    # Continued: the same request but for the input, which is only what came after resp_1.
    assert second["previous_response_id"] == "resp_1"
    assert [item["type"] for item in second["input"]] == ["function_call_output"]
    assert second["input"][0]["call_id"] == "call_1" and "alpha" in second["input"][0]["output"]
    rest = {k: v for k, v in second.items() if k not in ("input", "previous_response_id")}
    assert rest == {k: v for k, v in first.items() if k != "input"}
    replies = _assistants(agent)
    assert [m["stopReason"] for m in replies] == ["toolUse", "stop"]
    assert all("diagnostics" not in m for m in replies)
    assert replies[0]["responseId"] == "resp_1" and replies[1]["responseId"] == "resp_2"


def test_a_refused_upgrade_falls_back_to_sse_for_the_rest_of_the_session(isolated_environment):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    script = SocketScript(accept=False)
    with AuthServer(websocket=script) as server:
        env = _login(server, agent, work)
        done = run_pi("-p", "--model", MODEL, "read a.txt", env=env, cwd=work)
    assert done.returncode == 0 and done.stdout.strip() == "Done reading.", done.stderr
    assert len(server.upgrades) == 1  # tried once; the second request went straight to SSE
    posts = [r for r in server.requests if r.path == "/codex/responses" and r.method == "POST"]
    assert len(posts) == 2 and [conn for conn, _ in script.messages] == [0, 0]
    assert posts[0].headers["openai-beta"] == "responses=experimental"
    assert posts[0].headers.get("content-encoding") == "zstd"  # zstandard is a test dependency
    first, second = (m for _, m in script.messages)
    assert "previous_response_id" not in second and len(second["input"]) > len(first["input"])
    replies = _assistants(agent)
    assert [m["stopReason"] for m in replies] == ["toolUse", "stop"]
    (diagnostic,) = replies[0]["diagnostics"]
    assert diagnostic["type"] == "provider_transport_failure"
    assert "426" in diagnostic["error"]["message"]
    size = len(json.dumps(first, ensure_ascii=False, separators=(",", ":")).encode())
    assert diagnostic["details"] == {
        "configuredTransport": "auto", "fallbackTransport": "sse", "eventsEmitted": False,
        "phase": "before_message_stream_start", "requestBytes": size,
    }  # fmt: skip
    assert "diagnostics" not in replies[1]


def test_pi_and_pi_host_send_the_same_first_websocket_message(isolated_environment):
    """pi 1.6.0 opens the socket only where its runtime has a WebSocket (Node 22+); elsewhere it
    falls back to SSE itself and only the request bodies are compared."""
    pi = find_pi()
    if pi is None:
        import pytest

        pytest.skip("pi 1.6.0 is not installed under .tools")
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    script = SocketScript(answer=lambda message, n: SocketScript().answer(message, 2))  # text only
    with AuthServer(websocket=script) as server:
        env = _login(server, agent, work)
        ours = run_pi("-p", "--no-session", "--model", MODEL, "hi", env=env, cwd=work)
        assert ours.returncode == 0 and ours.stdout.strip() == "Done reading.", ours.stderr
        theirs = run_print(pi, ["-p", "--no-session", "--model", MODEL, "hi"], str(work), str(agent))
        assert theirs.returncode == 0 and theirs.stdout.strip() == "Done reading.", theirs.stderr
    (_, mine), (conn, pis) = script.messages
    ups = [u.headers for u in server.upgrades]
    if conn == 0:  # pi went over SSE: its body is the message less the type
        pis = {"type": "response.create", **pis}
    else:  # the same upgrade request, but for the user agent and the ids of each run
        for name in (
            "authorization",
            "chatgpt-account-id",
            "openai-beta",
            "originator",
            "sec-websocket-version",
        ):
            assert ups[0][name] == ups[1][name], name
        assert all(u["session-id"] == u["x-client-request-id"] for u in ups)
        assert pis["prompt_cache_key"] == ups[1]["session-id"]
    assert mine.pop("prompt_cache_key") != pis.pop("prompt_cache_key")  # each run's own session id
    # The words of the system prompt and of the tool descriptions are each side's own, and pi's
    # built-in tools ask for strict sampling (`"strict": true`, every property required, optional
    # ones nullable):
    # a difference of the tools' definitions, not of the transport.
    assert _shape(mine.pop("input")) == _shape(pis.pop("input"))
    assert mine == pis


def _shape(value: Any, key: str = "") -> Any:
    """``value`` without prose and tool schemas: strings but ``type``, ``role`` and ``name``."""
    if isinstance(value, dict):
        return {k: _shape(v, k) for k, v in value.items() if k not in ("description", "parameters", "strict")}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return value if not isinstance(value, str) or key in ("type", "role", "name") else "<text>"


def test_the_transport_setting_sse_sends_no_websocket(isolated_environment):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    (agent / "settings.json").write_text(json.dumps({"transport": "sse"}))
    script = SocketScript()
    with AuthServer(websocket=script) as server:
        env = _login(server, agent, work)
        done = run_pi("-p", "--model", MODEL, "read a.txt", env=env, cwd=work)
    assert done.returncode == 0 and done.stdout.strip() == "Done reading.", done.stderr
    assert server.upgrades == [] and [conn for conn, _ in script.messages] == [0, 0]  # 0: over SSE
    assert len([r for r in server.requests if r.path == "/codex/responses"]) == 2
    assert all("diagnostics" not in m for m in _assistants(agent))
