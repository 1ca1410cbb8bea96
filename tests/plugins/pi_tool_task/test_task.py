"""The ``task`` tool and ``ctx.spawn`` in process (faux model): three sub-agents of one answer
run at once, each in a child session file linked to the parent, recorded in the parent, their
usage in the parent's totals; an abort cancels them all; a child's own budget stops it alone."""

from __future__ import annotations

import asyncio
import json
import time

import pi_provider_faux

import pi_host
from tests.support.faux import slow, text, tool_calls

CHILD_S = 0.4


def three_tasks() -> dict:
    return tool_calls(*[("task", {"prompt": f"count files in part {n}"}) for n in range(3)])


async def _parent(tmp_path, **kwargs):
    return await pi_host.create_session(
        model="faux/faux-1", cwd=str(tmp_path), settings={}, tools=["read", "task"],
        store_options={"session_dir": str(tmp_path / "sessions")}, **kwargs,
    )  # fmt: skip


def _lines(path) -> list[dict]:
    return [json.loads(line) for line in open(path)]


async def test_three_subagents_run_concurrently_in_linked_child_sessions(tmp_path):
    child = slow("child answer " * 5, delay_ms=int(CHILD_S * 1000 / 9))  # ~CHILD_S seconds each
    pi_provider_faux.set_responses([three_tasks(), child, child, child, text("all three done")])
    session = await _parent(tmp_path)
    seen = []
    session.subscribe(seen.append)
    started = time.monotonic()
    await session.prompt("split the work in three")
    wall = time.monotonic() - started
    assert session.last_assistant().text() == "all three done"
    assert wall < 2 * CHILD_S, wall  # one after another would take 3 x CHILD_S

    parent_file = session.store.session_file
    records = [e for e in session.store.entries() if e.get("customType") == "subagent"]
    assert len(records) == 3
    files = {r["data"]["sessionFile"] for r in records}
    for record in records:
        data = record["data"]
        assert data["stopReason"] == "stop" and data["result"].startswith("child answer")
        header = _lines(data["sessionFile"])[0]
        assert header["type"] == "session" and header["parentSession"] == parent_file
        assert header["id"] == data["sessionId"]
    assert len(files) == 3

    starts = [e for e in seen if e["type"] == "subagent_start"]
    tagged = [e for e in seen if e["type"] == "subagent_event"]
    assert len(starts) == 3 and {e["subagentId"] for e in tagged} == {r["data"]["sessionId"] for r in records}
    assert all(e["toolCallId"] for e in starts)
    results = [m for m in session.messages if getattr(m, "role", None) == "toolResult"]
    assert [r.is_error for r in results] == [False] * 3

    budget = session.agent.budget  # the parent's totals include the children's
    own = [m for m in session.messages if getattr(m, "role", None) == "assistant"]
    children = sum(r["data"]["usage"]["tokens"] for r in records)
    assert budget.turns == len(own) + 3
    assert budget.tokens == sum(m.usage.total_tokens for m in own) + children
    await session.close()


async def test_an_abort_cancels_every_child(tmp_path):
    endless = slow("x" * 4000, delay_ms=50)
    pi_provider_faux.set_responses([three_tasks(), endless, endless, endless, text("unused")])
    session = await _parent(tmp_path)
    ended = []
    session.subscribe(lambda e: ended.append(e) if e["type"] == "subagent_end" else None)
    await session.prompt("go", wait=False)
    for _ in range(200):
        if len([r for r in pi_provider_faux.requests]) >= 4:
            break
        await asyncio.sleep(0.01)
    started = time.monotonic()
    await session.abort()
    assert time.monotonic() - started < 2
    assert [e["result"]["stopReason"] for e in ended] == ["aborted"] * 3
    await session.close()


async def test_spawn_with_its_own_turn_budget(tmp_path):
    loop = tool_calls(("read", {"path": "nothing.txt"}))
    pi_provider_faux.set_responses([loop, loop, loop])
    session = await _parent(tmp_path)
    result = await session.ctx.spawn("read until told", tools=["read"], max_turns=2, system="You are terse.")
    assert result.stop_reason == "budget" and result.budget_stop["budget"] == "turns"
    assert result.budget_stop["scope"] == "subagent" and result.turns == 2
    assert len(pi_provider_faux.requests) == 2
    assert "You are terse." in json.dumps(pi_provider_faux.requests[0]["messages"][0], default=str)
    assert session.agent.budget.turns == 2  # the child's turns count in the parent's totals
    await session.close()


async def test_the_tool_is_off_unless_enabled(tmp_path):
    session = await pi_host.create_session(model="faux/faux-1", cwd=str(tmp_path), settings={})
    assert "task" in session.all_tools and "task" not in session.active_tools
    await session.close()
