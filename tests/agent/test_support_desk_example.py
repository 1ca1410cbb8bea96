"""examples/support_desk.py runs against the faux model and against a loopback OpenAI-compatible
server: tools, the staff note kept from the model, the supervisor's steer, the JSONL store."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from pathlib import Path

from tests.support.loopback import LoopbackServer, Reply, ToolCall

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support_desk.py"


def load_example():
    spec = importlib.util.spec_from_file_location("support_desk_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves the module's annotations through it
    spec.loader.exec_module(module)
    return module


def test_the_example_runs_on_the_faux_model(tmp_path, capsys):
    example = load_example()
    store = tmp_path / "desk.jsonl"
    asyncio.run(example.main(["--store", str(store)]))
    out = capsys.readouterr().out
    assert "refunds: [{'order': 'A-200', 'amount': 25.0" in out
    assert "reopened" in out and "Supervisor: this customer is a VIP" in out
    roles = [json.loads(line)["role"] for line in store.read_text().splitlines()]
    assert roles[0] == "staffNote" and roles.count("toolResult") == 2


def test_the_example_runs_against_a_loopback_server(tmp_path, capsys):
    example = load_example()
    store = tmp_path / "desk.jsonl"
    script = [
        Reply("", tool_calls=[ToolCall("lookup_order", {"order_id": "A-200"})]),
        Reply(
            "",
            tool_calls=[ToolCall("issue_refund", {"order_id": "A-200", "reason": "lost", "waive_fee": True})],
        ),
        Reply("Refunded."),
        Reply("Bye."),
    ]
    with LoopbackServer(script) as server:
        asyncio.run(example.main(["--base-url", server.url, "--store", str(store)]))
        bodies = server.requests
    out = capsys.readouterr().out
    assert "'amount': 25.0" in out and out.rstrip().endswith("Bye.")
    for body in bodies:  # the staff note never reaches the model
        assert "called twice" not in json.dumps(body)
    assert "VIP" in json.dumps(bodies[1]["messages"][-1])  # the supervisor's steer, before request 2
    assert "Refunded." in json.dumps(bodies[3]["messages"])  # the reopened agent sends the stored history
