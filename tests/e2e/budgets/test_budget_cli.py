"""`pi --max-turns` / `--max-cost` against the loopback model: the server proves which requests
were made; the stop is in the JSON stream and the session file."""

from __future__ import annotations

import json

from tests.e2e.batch.helpers import write_priced_models
from tests.support.loopback import PROVIDER, LoopbackServer, Reply, write_models_json
from tests.support.pi import run_pi


def _loop(n: int = 5) -> list[Reply]:
    return [Reply.tool("bash", {"command": f"echo {i}"}) for i in range(n)] + [Reply("done")]


def _events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def test_max_turns_1_stops_after_one_turn_and_records_why(isolated_environment, tmp_path):
    with LoopbackServer(_loop()) as server:
        write_models_json(isolated_environment["agent"], server.url)
        out = run_pi(
            "--mode", "json", "--model", f"{PROVIDER}/loop-1", "--session-dir", str(tmp_path),
            "--max-turns", "1", "work",
        )  # fmt: skip
        assert len(server.requests) == 1
    assert out.returncode == 0, out.stderr
    stop = [e for e in _events(out.stdout) if e["type"] == "budget_exceeded"]
    assert stop and stop[0]["budget"] == "turns" and stop[0]["limit"] == 1
    assert "stopped: turns budget reached" in out.stderr
    [file] = list(tmp_path.glob("*.jsonl"))
    entries = [json.loads(line) for line in file.read_text().splitlines()]
    assert any(e.get("customType") == "budget_exceeded" for e in entries)


def test_max_cost_stops_before_the_request_that_would_cross_it(isolated_environment):
    with LoopbackServer(_loop()) as server:
        write_priced_models(isolated_environment["agent"], server.url, input_per_million=1000.0)
        first = run_pi("--mode", "json", "--model", f"{PROVIDER}/loop-1", "--no-session", "work")
        calls = [
            e
            for e in _events(first.stdout)
            if e["type"] == "message_end" and e["message"]["role"] == "assistant"
        ]
        one = calls[0]["message"]["usage"]["cost"]["total"]
        assert one > 0
    with LoopbackServer(_loop()) as server:
        write_priced_models(isolated_environment["agent"], server.url, input_per_million=1000.0)
        out = run_pi(
            "--mode",
            "json",
            "--model",
            f"{PROVIDER}/loop-1",
            "--no-session",
            "--max-cost",
            str(one * 1.5),
            "work",
        )
        assert len(server.requests) == 1  # the second would cost at least as much again: not made
    stop = next(e for e in _events(out.stdout) if e["type"] == "budget_exceeded")
    assert stop["budget"] == "cost" and stop["spent"] < one * 1.5 < stop["spent"] + stop["nextAtLeast"]


def test_three_task_subagents_run_concurrently_over_the_loopback_model(isolated_environment, tmp_path):
    from tests.support.loopback import ToolCall

    calls = [ToolCall("task", {"prompt": f"part {n}"}) for n in range(3)]
    child = Reply.slow(words=12, delay=0.08)  # ~1 s of streaming each
    with LoopbackServer([Reply(text="", tool_calls=calls), child, child, child, Reply("all done")]) as server:
        write_models_json(isolated_environment["agent"], server.url)
        out = run_pi(
            "--mode", "json", "--model", f"{PROVIDER}/loop-1", "--session-dir", str(tmp_path),
            "--tools", "read,task", "split it",
        )  # fmt: skip
        children = [x for x in server.exchanges if x.path.endswith("/chat/completions")][1:4]
    assert out.returncode == 0, out.stderr
    events = _events(out.stdout)
    ends = [e for e in events if e["type"] == "subagent_end"]
    assert len(ends) == 3 and all(e["result"]["stopReason"] == "stop" for e in ends)
    starts = [e for e in events if e["type"] == "subagent_start"]
    assert len({e["subagentId"] for e in starts}) == 3
    files = sorted(tmp_path.glob("*.jsonl"))
    assert len(files) == 4  # the parent and three children
    parent = next(f for f in files if "parentSession" not in f.read_text().splitlines()[0])
    for e in ends:
        header = json.loads(open(e["result"]["sessionFile"]).readline())
        assert header["parentSession"] == str(parent)
    one = max(x.finished - x.started for x in children)
    wall = max(x.finished for x in children) - min(x.started for x in children)
    print(f"three children: wall {wall:.2f} s, one child {one:.2f} s")
    assert wall < 1.6 * one  # one after another: 3 x one
