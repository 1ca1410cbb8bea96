"""Hostile input on ``pi --mode rpc``'s stdin: a deeply nested JSON line gets pi's parse error and
the server stays up; a huge line is framed in linear time and does not stall the commands and
events around it."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from pi_host.rpc import RpcClient


@pytest.fixture
def client(isolated_environment):
    pi = RpcClient(
        args=["--model", "faux/faux-1", "--no-session"], cwd=isolated_environment["work"], timeout=60
    )
    try:
        yield pi
    finally:
        pi.close()


def _parse_error(pi: RpcClient) -> dict:
    record = pi.wait_for_event(
        lambda r: r.get("type") == "response" and r.get("command") == "parse", timeout=30
    )
    assert record["success"] is False and "id" not in record
    assert record["error"].startswith("Failed to parse command: "), record
    return record


def test_a_deeply_nested_line_gets_a_parse_error_and_the_server_stays_up(client):
    client.send_line(b"[" * 100_000)  # pi 1.6.0: "Failed to parse command: Unexpected end of JSON input"
    error = _parse_error(client)
    assert "recursion" in error["error"] or "nested" in error["error"]
    assert client.get_state()["isStreaming"] is False  # the next command still answers
    # closed nesting, and nesting inside a real command, are refused the same way
    client.send_line(b"[" * 100_000 + b"]" * 100_000)
    _parse_error(client)
    client.send_line(b'{"id":"deep","type":"get_state","x":' + b"[" * 50_000 + b"]" * 50_000 + b"}")
    _parse_error(client)
    # an id the parser takes but the answer could not repeat: refused, not left unanswered
    client.send_line(b'{"type":"get_state","id":' + b"[" * 500 + b"]" * 500 + b"}")
    _parse_error(client)
    assert client.get_state()["isStreaming"] is False
    assert client.returncode is None
    assert client.close() == 0
    assert "Traceback" not in client.stderr


def test_a_huge_line_is_framed_in_linear_time_and_does_not_stall_other_work(client, tmp_path: Path):
    """64 MB in one line: quadratic framing took ~55 s here (40 MB: 21 s); linear takes ~1 s."""
    updates: list[float] = []
    client.on_event(
        lambda r: updates.append(time.monotonic()) if r.get("type") == "bash_execution_update" else None
    )
    # a command that prints a line every 50 ms for 6 s runs while the big line goes in
    script = "for i in $(seq 120); do echo $i; sleep 0.05; done"
    done: dict[str, object] = {}
    runner = threading.Thread(target=lambda: done.update(bash=client.bash(script)), daemon=True)
    runner.start()
    while not updates:
        time.sleep(0.01)
    pad = b"a" * (64 * 1024 * 1024)
    started = time.monotonic()
    client.send_line(b'{"id":"big","type":"get_state","pad":"' + pad + b'"}')
    del pad
    state = client.get_state()  # answered after the big line was read and parsed
    elapsed = time.monotonic() - started
    assert state["isStreaming"] is False
    assert elapsed < 20, f"64 MB line took {elapsed:.1f} s to frame and answer"
    runner.join(timeout=30)
    assert done["bash"]["exitCode"] == 0 and done["bash"]["output"].endswith("119\n120\n")
    # the events of the running command kept coming while the line was read
    during = [t for t in updates if started - 0.5 <= t <= started + elapsed + 0.5]
    gaps = [b - a for a, b in zip(during, during[1:], strict=False)]
    assert gaps and max(gaps) < 2.5, f"updates stalled for {max(gaps):.1f} s"
    assert client.close() == 0
    assert os.path.isdir(tmp_path)
