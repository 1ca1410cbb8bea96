"""Budgets on a session (faux model, in process): checked before each request, recorded in the
session file, continued by a resumed session, shared up a chain of budgets."""

from __future__ import annotations

import json

import pi_provider_faux

import pi_host
from pi_host.agent.budget import Budget, Limits, parse_duration, projection
from pi_host.protocol.messages import Cost
from pi_host.runtime.budgets import limits_for


def call(n: int) -> dict:
    return {"toolCalls": [{"name": "bash", "arguments": {"command": f"echo {n}"}}]}


async def _session(tmp_path, **kwargs):
    return await pi_host.create_session(
        model="faux/faux-1", cwd=str(tmp_path), settings={}, store_options={"session_dir": str(tmp_path / "s")},
        **kwargs,
    )  # fmt: skip


async def test_max_turns_stops_before_the_next_request_and_records_why(tmp_path):
    pi_provider_faux.set_responses([call(n) for n in range(5)])
    session = await _session(tmp_path, limits=Limits(turns=1))
    seen = []
    session.subscribe(seen.append)
    await session.prompt("loop")
    assert len(pi_provider_faux.requests) == 1
    stop = [e for e in seen if e["type"] == "budget_exceeded"]
    assert stop == [
        {"type": "budget_exceeded", "budget": "turns", "limit": 1, "spent": 1, "scope": "session"}
    ]
    assert session.agent.budget_stop["budget"] == "turns"
    entries = [e for e in session.store.entries() if e.get("customType") == "budget_exceeded"]
    assert entries[0]["data"]["budget"] == "turns" and entries[0]["data"]["totals"]["turns"] == 1
    file = session.store.session_file
    await session.close()
    records = [json.loads(line) for line in open(file)]
    assert any(r.get("customType") == "budget_exceeded" for r in records)


def priced_model():
    from pi_host.ai import get_model
    from pi_host.protocol.model import ModelCost

    return get_model("faux", "faux-1").model_copy(update={"cost": ModelCost(input=10, output=10)})


async def test_a_resumed_session_continues_its_totals(tmp_path):
    pi_provider_faux.set_responses([{"text": "one"}, {"text": "two"}])
    session = await _session(tmp_path)
    session.model = priced_model()
    await session.prompt("first")
    await session.prompt("second")
    file = session.store.session_file
    spent = sum(m.usage.cost.total for m in session.messages if m.role == "assistant")
    await session.close()
    assert len(pi_provider_faux.requests) == 2 and spent > 0.01

    pi_provider_faux.set_responses([{"text": "three"}])
    again = await pi_host.create_session(
        model=priced_model(), cwd=str(tmp_path), settings={"budgets": {"maxCost": spent + 0.005}},
        store_options={"session": file},
    )  # fmt: skip
    assert abs(again.agent.budget.cost - spent) < 1e-9 and again.agent.budget.turns == 2
    seen = []
    again.subscribe(seen.append)
    await again.prompt("third")
    assert pi_provider_faux.requests == []  # under the cap, but the request would cross it
    stop = next(e for e in seen if e["type"] == "budget_exceeded")
    assert stop["budget"] == "cost" and stop["nextAtLeast"] > 0.005
    await again.close()


async def test_max_tokens_and_max_time(tmp_path):
    pi_provider_faux.set_responses([call(0), call(1), {"text": "done"}])
    session = await _session(tmp_path, limits=Limits(tokens=1))
    await session.prompt("go")
    assert len(pi_provider_faux.requests) == 1 and session.agent.budget_stop["budget"] == "tokens"
    await session.close()
    pi_provider_faux.set_responses([{"text": "never"}])
    session = await _session(tmp_path, limits=Limits(time_s=0))
    await session.prompt("go")
    assert pi_provider_faux.requests == []
    assert session.agent.budget_stop["budget"] == "time"
    await session.close()


def test_a_chain_adds_up_and_the_tightest_budget_stops():
    root = Budget(Limits(cost=1.0), scope="batch")
    a, b = root.child(Limits(turns=5), scope="session"), root.child(scope="session")
    usage = pi_host.protocol.messages.Usage(input=10, output=5, cost=Cost(total=0.4))
    a.charge(usage)
    b.charge(usage)
    assert (root.turns, round(root.cost, 6), root.tokens) == (2, 0.8, 30)
    assert a.check() is None
    assert a.check(next_cost=0.3) == {
        "budget": "cost", "limit": 1.0, "spent": 0.8, "scope": "batch", "nextAtLeast": 0.3,
    }  # fmt: skip


def test_projection_is_the_previous_context_at_the_cheapest_input_rate():
    from pi_host.protocol import AssistantMessage
    from pi_host.protocol.messages import Usage

    model = type("M", (), {"cost": type("C", (), {"input": 2.0, "cache_read": 0.5})()})()
    answer = AssistantMessage(content=[], usage=Usage(input=1000, output=1000, cache_read=2000))
    cost, tokens = projection([answer], model)
    assert tokens == 4000 and cost == 4000 * 0.5 / 1_000_000
    assert projection([], model) == (0.0, 0)


def test_limits_from_settings_and_durations():
    assert parse_duration("5m") == 300 and parse_duration(90) == 90 and parse_duration("x") is None
    limits = limits_for(Limits(turns=3), {"budgets": {"maxTurns": 9, "maxCost": 0.5, "maxTime": "1h"}})
    assert (limits.turns, limits.cost, limits.time_s, limits.tokens) == (3, 0.5, 3600, None)
