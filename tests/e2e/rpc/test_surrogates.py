"""Lone surrogates on the wire: ``pi --mode rpc`` and ``pi --mode json`` as a client sees them.

JSON lets a string hold ``"\\ud800"``; pi (JavaScript) keeps such a string and ``JSON.stringify``
writes it back as the same escape (checked by hand against pi 1.6.0: its ``message_start`` for
the prompt holds ``"hi \\ud800 there"``). pi-host used to fail to encode every event holding it:
the user message's events became ``extension_error`` lines and the ``get_messages`` answer was
never written, so a client waited forever.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from typing import Any

import pytest

from tests.support.faux import text
from tests.support.pi import run_pi, start_pi

FAUX = ("--model", "faux/faux-1")


class RawRpc:
    """``pi --mode rpc`` on bytes: every stdout line kept raw (to see the escapes) and parsed."""

    def __init__(self, cwd: Any, script: list[dict[str, Any]]) -> None:
        self.proc = start_pi("--mode", "rpc", *FAUX, cwd=cwd, script=script, text=False)
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.seen: list[tuple[bytes, dict[str, Any]]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            self.lines.put(line)

    def write(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def until(self, predicate: Any, timeout: float = 20) -> tuple[bytes, dict[str, Any]]:
        while True:
            try:
                raw = self.lines.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no such line within {timeout}s; seen: {self.seen[-5:]}") from None
            record = json.loads(raw)
            self.seen.append((raw, record))
            if predicate(record):
                return raw, record

    def close(self) -> None:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def user_text(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)


@pytest.fixture
def rpc(isolated_environment):
    client = RawRpc(isolated_environment["work"], [text("answer")])
    yield client
    client.close()


def test_an_rpc_prompt_with_a_lone_surrogate_streams_normal_message_events(rpc):
    rpc.write(b'{"id":"p1","type":"prompt","message":"hi \\ud800 there"}')
    _, answer = rpc.until(lambda r: r.get("type") == "response" and r.get("id") == "p1")
    assert answer["success"] is True
    rpc.until(lambda r: r.get("type") == "agent_settled")
    kinds = [record["type"] for _, record in rpc.seen]
    assert "extension_error" not in kinds
    user_events = [
        (raw, record)
        for raw, record in rpc.seen
        if record["type"] in ("message_start", "message_end") and record["message"]["role"] == "user"
    ]
    assert [record["type"] for _, record in user_events] == ["message_start", "message_end"]
    for raw, record in user_events:
        assert user_text(record["message"]) == "hi \ud800 there"
        assert b"hi \\ud800 there" in raw  # escaped as JSON.stringify writes it

    rpc.write(b'{"id":"m1","type":"get_messages"}')
    _, messages = rpc.until(lambda r: r.get("type") == "response" and r.get("id") == "m1", timeout=10)
    assert messages["success"] is True
    said = [user_text(m) for m in messages["data"]["messages"] if m["role"] == "user"]
    assert said == ["hi \ud800 there"]


def test_the_rpc_session_file_keeps_the_message(rpc):
    rpc.write(b'{"id":"p1","type":"prompt","message":"cut \\ud83d emoji"}')
    rpc.until(lambda r: r.get("type") == "agent_settled")
    rpc.write(b'{"id":"s1","type":"get_state"}')
    _, state = rpc.until(lambda r: r.get("type") == "response" and r.get("id") == "s1", timeout=10)
    rpc.close()
    with open(state["data"]["sessionFile"], "rb") as handle:
        lines = [json.loads(line) for line in handle]
    users = [e["message"] for e in lines if e.get("type") == "message" and e["message"]["role"] == "user"]
    assert [user_text(m) for m in users] == ["cut \ud83d emoji"]


def test_json_mode_keeps_a_prompt_that_is_not_utf8(isolated_environment):
    # The argument reaches pi as the bytes 61 ff 62 (Python keeps 0xFF as a lone surrogate).
    done = run_pi("--mode", "json", *FAUX, "--no-session", "a\udcffb", script=[text("answer")])
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert "extension_error" not in [r["type"] for r in records]
    users = [r["message"] for r in records if r["type"] == "message_end" and r["message"]["role"] == "user"]
    assert len(users) == 1
    said = user_text(users[0])
    assert (said[0], len(said), said[-1]) == ("a", 3, "b")
    agent_end = [r for r in records if r["type"] == "agent_end"]
    assert len(agent_end) == 1


def test_print_mode_writes_an_answer_holding_a_lone_surrogate_as_a_replacement_character(tmp_path):
    """What Node does when it writes such a string to stdout: U+FFFD, not a crash."""
    out = run_pi("-p", *FAUX, "--no-session", "go", cwd=tmp_path, script=[text("before \ud800 after")])
    assert out.returncode == 0, out.stderr
    assert out.stdout == "before \ufffd after\n" and out.stderr == ""
