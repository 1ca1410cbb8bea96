"""pi_host.agent on its own (faux model): events and state, custom messages kept out of the
model's context, hooks, steering from another task, follow-ups, abort then continue, budgets,
the store; and the coding agent's session running on it."""

from __future__ import annotations

import asyncio
import json

import pi_provider_faux
import pytest

from pi_host.agent import (
    Agent,
    AgentBusyError,
    BudgetExceeded,
    JsonlStore,
    PiModel,
    ToolResult,
    define_tool,
)
from pi_host.ai import ProviderInfo, create_models, get_model

ECHO = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


class Note(PiModel):
    role: str = "note"
    text: str
    timestamp: int = 0


def echo_tool(delay: float = 0.0):
    async def echo(call_id, params, signal, on_update):
        await asyncio.sleep(delay)
        return f"echo: {params['text']}"

    return define_tool("echo", "Echo text", ECHO, echo)


def call(text: str) -> dict:
    return {"toolCalls": [{"name": "echo", "arguments": {"text": text}}]}


def run(coroutine):
    return asyncio.run(coroutine)


def test_a_prompt_runs_tools_and_reports_pi_shaped_events():
    pi_provider_faux.set_responses([call("hi"), {"text": "got {{lastToolResult}}"}])
    agent = Agent(get_model("faux", "faux-1"), system_prompt="sys", tools=[echo_tool()])
    seen = []
    agent.subscribe(lambda e: seen.append(e))
    run(agent.prompt("go"))
    kinds = [e["type"] for e in seen]
    assert kinds[:4] == ["agent_start", "turn_start", "message_start", "message_end"]
    assert kinds.count("turn_end") == 2 and kinds[-1] == "agent_end"
    end = next(e for e in seen if e["type"] == "tool_execution_end")
    assert end["toolName"] == "echo" and end["result"]["content"][0]["text"] == "echo: hi"
    assert [m.role for m in agent.state.messages] == [
        "system",
        "user",
        "assistant",
        "toolResult",
        "assistant",
    ]
    assert agent.state.messages[-1].text() == "got echo: hi" and agent.state.system_prompt == "sys"
    assert not agent.state.is_streaming and agent.state.error_message is None


def test_custom_messages_stay_out_of_the_context_and_hooks_apply():
    pi_provider_faux.set_responses([call("a"), {"text": "done"}])
    transformed = []

    def transform(messages):
        transformed.append(len(messages))
        return messages

    def after(call):
        return {"details": {"audited": True}}

    agent = Agent(
        get_model("faux", "faux-1"), tools=[echo_tool()], transform_context=transform, after_tool_call=after
    )

    async def main():
        await agent.add_message(Note(text="private"))
        await agent.prompt("go")

    run(main())
    for request in pi_provider_faux.requests:
        assert all(getattr(m, "role", None) != "note" for m in request["messages"])
    assert agent.state.messages[0].role == "note" and len(transformed) == 2  # one per request
    result = next(m for m in agent.state.messages if m.role == "toolResult")
    assert result.details == {"audited": True}


def test_before_tool_call_can_block_and_terminate():
    pi_provider_faux.set_responses([call("x"), {"text": "never"}])
    agent = Agent(
        get_model("faux", "faux-1"),
        tools=[echo_tool()],
        before_tool_call=lambda c: {"block": True, "reason": "not today", "terminate": True},
    )
    run(agent.prompt("go"))
    result = agent.state.messages[-1]
    assert result.role == "toolResult" and result.is_error and result.content[0].text == "not today"
    assert len(pi_provider_faux.requests) == 1  # terminated: no follow-up request


def test_steering_from_another_task_and_a_follow_up():
    pi_provider_faux.set_responses(
        [call("slow"), {"text": "saw {{userMessages}}"}, {"text": "follow-up done"}]
    )
    agent = Agent(get_model("faux", "faux-1"), tools=[echo_tool(delay=0.05)])

    async def supervisor():
        started = asyncio.Event()
        agent.subscribe(lambda e: started.set() if e["type"] == "tool_execution_start" else None)
        await started.wait()
        agent.steer("steered")
        agent.follow_up("and then this")
        with pytest.raises(AgentBusyError):
            await agent.prompt("not now")

    async def main():
        task = asyncio.create_task(supervisor())
        await agent.prompt("start")
        await task

    run(main())
    users = [m.content[0].text for m in agent.state.messages if m.role == "user"]
    assert users == ["start", "steered", "and then this"]
    assert "steered" in pi_provider_faux.requests[1]["messages"][-1].content[0].text
    assert agent.state.messages[-1].text() == "follow-up done" and not agent.has_queued_messages()


def test_abort_then_continue():
    pi_provider_faux.set_responses([{"text": "slow " * 100, "delayMs": 10}, {"text": "back again"}])
    agent = Agent(get_model("faux", "faux-1"))

    async def main():
        await agent.prompt("long", wait=False)
        await asyncio.sleep(0.08)
        agent.abort()
        await agent.wait_for_idle()
        aborted = agent.state.messages[-1]
        with pytest.raises(ValueError):
            await agent.continue_()  # an assistant tail and nothing queued
        agent.steer("continue please")
        await agent.continue_()
        return aborted

    aborted = run(main())
    assert aborted.stop_reason == "aborted" and aborted.text().startswith("slow")
    assert agent.state.messages[-1].text() == "back again"
    assert agent.state.error_message is None


def test_turn_and_cost_budgets():
    pi_provider_faux.set_responses([call(str(n)) for n in range(5)])
    agent = Agent(get_model("faux", "faux-1"), tools=[echo_tool()], max_turns=2)
    budget = []
    agent.subscribe(lambda e: budget.append(e) if e["type"] == "budget_exceeded" else None)
    run(agent.prompt("loop forever"))
    assert len(pi_provider_faux.requests) == 2 and budget[0]["budget"] == "turns"

    prices = {"input": 100_000, "output": 100_000, "cacheRead": 0, "cacheWrite": 0}  # $0.10 a token
    info = ProviderInfo(id="faux", api="faux", needs_key=False, models=[{"id": "pricey", "cost": prices}])
    models = create_models(pi_provider_faux.register_providers(), [info])
    pi_provider_faux.set_responses([{"text": "pricey"}])
    rich = Agent(models.get_model("faux", "pricey"), models=models, max_cost=0.15)
    run(rich.prompt("spend"))
    assert rich.state.total_cost == pytest.approx(rich.state.messages[-1].usage.cost.total)
    assert rich.state.total_cost > 0.15
    with pytest.raises(BudgetExceeded):
        run(rich.prompt("more"))


def test_a_store_keeps_the_conversation_with_custom_types(tmp_path):
    path = tmp_path / "chat.jsonl"
    pi_provider_faux.set_responses([{"text": "first"}, {"text": "second: {{userMessages}}"}])
    store = JsonlStore(path, decoders={"note": Note.model_validate})
    agent = Agent(get_model("faux", "faux-1"), system_prompt="sys", store=store)

    async def main():
        await agent.add_message(Note(text="n1"))
        await agent.prompt("one")

    run(main())
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["role"] for line in lines] == ["note", "system", "user", "assistant"]
    again = Agent(get_model("faux", "faux-1"), store=JsonlStore(path, decoders={"note": Note.model_validate}))
    assert isinstance(again.state.messages[0], Note)
    run(again.prompt("two"))
    assert again.state.messages[-1].text() == "second: one | two"


def test_the_coding_agent_session_runs_on_an_agent():
    import pi_host
    from pi_host.session.agent_session import AgentSession

    async def main():
        session = await pi_host.create_session(model="faux/faux-1", store_options={"no_session": True})
        try:
            assert isinstance(session, AgentSession) and isinstance(session.agent, Agent)
            assert session.messages is session.agent.state.messages
            assert session.active_tools is session.agent.state.tools
            pi_provider_faux.set_responses([{"text": "hello"}])
            await session.prompt("hi")
            return session.agent.state.messages[-1].text()
        finally:
            await session.close()

    assert run(main()) == "hello"


def test_tool_results_may_be_tool_result_objects_or_json():
    def structured(call_id, params, signal, on_update):
        return {"n": 1} if params["text"] == "json" else ToolResult.text("plain", details={"k": 2})

    tool = define_tool("echo", "Echo", ECHO, structured)
    pi_provider_faux.set_responses([call("json"), call("plain"), {"text": "ok"}])
    agent = Agent(get_model("faux", "faux-1"), tools=[tool])
    run(agent.prompt("go"))
    results = [m for m in agent.state.messages if m.role == "toolResult"]
    assert results[0].content[0].text == '{"n": 1}' and results[0].details == {"n": 1}
    assert results[1].details == {"k": 2}
