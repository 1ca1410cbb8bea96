"""Harbor's stock pi agent limits turns with a TypeScript extension given with --extension
(``max_turns``): pi-host must stop the run after that many turns, as pi does, instead of running
on without the limit (the extension's load failing silently)."""

from __future__ import annotations

import json

import pytest

from tests.e2e.ts_bridge.conftest import FIXTURES
from tests.support.loopback import PROVIDER, LoopbackServer, Reply, write_models_json
from tests.support.pi import run_pi

MODEL = ("--model", f"{PROVIDER}/loop-1", "--no-session")


def _endless(count: int = 8) -> list[Reply]:
    return [Reply.tool("bash", {"command": f"echo step {i}"}) for i in range(count)] + [Reply("done")]


@pytest.mark.parametrize("budget", [1, 3])
def test_the_run_stops_after_the_budget_of_turns(budget, node_env, isolated_environment):
    with LoopbackServer(_endless()) as server:
        write_models_json(isolated_environment["agent"], server.url)
        out = run_pi(
            "--mode", "json", *MODEL, "--extension", str(FIXTURES / "max-turns.ts"), "work until done",
            env={**node_env, "MAX_TURNS": str(budget)},
        )  # fmt: skip
        requests = list(server.requests)
    assert out.returncode == 0, out.stderr
    assert len(requests) == budget  # no request after the budget
    assert "hard budget of" in json.dumps(requests[0]["messages"][0])  # the system prompt says so
    events = [json.loads(line)["type"] for line in out.stdout.splitlines() if line.startswith("{")]
    assert events.count("tool_execution_end") == budget
    assert events[-1] in ("agent_end", "agent_settled")
    assert "failed" not in out.stderr


def test_without_the_extension_the_same_run_goes_on(node_env, isolated_environment):
    with LoopbackServer(_endless(4)) as server:
        write_models_json(isolated_environment["agent"], server.url)
        out = run_pi("--mode", "json", *MODEL, "work until done", env=node_env)
        assert out.returncode == 0 and len(server.requests) == 5
