"""The scripted chat-completions server: OpenAI's streaming wire format, recording, aborts."""

from __future__ import annotations

import json
import time

import httpx

from tests.support.loopback import LoopbackServer, Reply, long_text, write_models_json


def _stream(url: str, body: dict) -> list:
    events = []
    with httpx.stream("POST", url + "/chat/completions", json=body, timeout=10) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("data: "):
                data = line[6:]
                events.append(data if data == "[DONE]" else json.loads(data))
    return events


def test_text_tool_calls_usage_and_default(tmp_path):
    log = tmp_path / "requests.jsonl"
    script = [
        Reply("hello big world", words_per_chunk=2),
        Reply.tool("bash", {"command": "echo hi"}, text="run"),
    ]
    with LoopbackServer(script, jsonl=log) as server:
        body = {"model": "loop-1", "stream": True, "stream_options": {"include_usage": True}, "messages": []}
        first = _stream(server.url, body)
        assert first[-1] == "[DONE]"
        assert first[0]["choices"][0]["delta"]["role"] == "assistant"
        text = "".join(e["choices"][0]["delta"].get("content") or "" for e in first[:-1] if e["choices"])
        assert text == "hello big world"
        assert first[-3]["choices"][0]["finish_reason"] == "stop"
        assert first[-2]["choices"] == [] and first[-2]["usage"]["completion_tokens"] > 0
        second = _stream(server.url, body)
        calls = [
            c for e in second[:-1] if e["choices"] for c in e["choices"][0]["delta"].get("tool_calls", [])
        ]
        assert calls[0]["function"]["name"] == "bash" and calls[0]["id"]
        assert json.loads("".join(c["function"]["arguments"] for c in calls)) == {"command": "echo hi"}
        assert second[-3]["choices"][0]["finish_reason"] == "tool_calls"
        third = _stream(server.url, {"stream": True, "messages": [{"role": "user", "content": "x"}]})
        assert [e for e in third if e == "[DONE]"] and "usage" not in third[-2]  # no include_usage
        assert "".join(e["choices"][0]["delta"].get("content") or "" for e in third[:-1]) == "ok"
        assert len(server.requests) == 3 and server.requests[2]["messages"][0]["content"] == "x"
        assert [json.loads(line) for line in log.read_text().splitlines()] == server.requests
        # the server marks an exchange done after its last write, which the client may read first
        server.wait(lambda: [e.status for e in server.exchanges] == ["done"] * 3, 5, "three done exchanges")


def test_slow_reply_is_aborted_when_the_client_hangs_up():
    with LoopbackServer([Reply.slow(2000, delay=0.005)]) as server:
        with httpx.stream(
            "POST", server.url + "/chat/completions", json={"stream": True}, timeout=10
        ) as response:
            lines = response.iter_lines()
            for _ in range(20):
                next(lines)
        started = time.monotonic()
        exchange = server.wait_finished(0, timeout=5)
        assert exchange.status == "aborted" and time.monotonic() - started < 1
        assert exchange.chunks_sent < 200


def test_long_text_and_models_json(tmp_path):
    assert len(long_text(2000).split()) == 2000 + 2000 // 12 + 1  # words plus line numbers
    path = write_models_json(tmp_path, "http://127.0.0.1:9")
    provider = json.loads(open(path).read())["providers"]["loop"]
    assert provider["baseUrl"] == "http://127.0.0.1:9/v1" and provider["api"] == "openai-completions"
    assert provider["models"][0]["id"] == "loop-1" and provider["models"][0]["contextWindow"] == 128000
