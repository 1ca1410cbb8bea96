"""pi-subagent: a ``subagent`` tool whose task runs in a second, separate session.

In-process runs (the faux provider: the parent and the sub-agent take their scripted answers from
the one queue, in the order they ask) check the tool's result, the sub-agent's tools and system
prompt, progress updates and aborts; then the package is installed by the real ``pi install`` into
a throw-away environment and driven in print mode and in a real terminal (tmux), checking the
parent's session file holds none of the sub-agent's messages.
"""

from __future__ import annotations

import asyncio
import time

import pi_provider_faux as faux
import pytest

import pi_host
from pi_host.plugins.loading import load_file_plugin
from tests.support.examples import example_module, install_example

SUBAGENT = example_module("pi-subagent", "pi_subagent")


def subagent(task: str, **fields) -> dict:
    return {"name": "subagent", "arguments": {"task": task, **fields}}


def system_text(request: dict) -> str:
    return "\n".join(str(m.content) for m in request["messages"] if m.role == "system")


def tool_names(request: dict) -> list[str]:
    return [t.name for t in request.get("tools") or ()]


async def new_session():
    plugin = load_file_plugin(SUBAGENT)
    return await pi_host.create_session(model="faux/faux-1", plugins=[plugin], settings={})


def tool_results(session) -> list:
    return [m for m in session.messages if m.role == "toolResult"]


async def test_the_tool_result_is_the_sub_agents_answer_from_its_own_session():
    faux.set_responses(
        [
            {"toolCalls": [subagent("count the files", tools=["bash"])]},
            {"toolCalls": [{"name": "bash", "arguments": {"command": "echo sub-ran"}}]},  # sub-agent
            {"text": "SUB ANSWER: {{lastToolResult}}"},  # sub-agent
            {"text": "parent got: {{lastToolResult}}"},
        ]
    )
    session = await new_session()
    updates: list = []
    session.subscribe(lambda e: e["type"] == "tool_execution_update" and updates.append(e["partialResult"]))
    await session.prompt("delegate")
    assert session.last_assistant().text().strip() == "parent got: SUB ANSWER: sub-ran"
    parent_first, sub_first, sub_second, parent_second = faux.requests
    assert "subagent" in tool_names(parent_first)
    assert tool_names(sub_first) == tool_names(sub_second) == ["bash"]
    assert "# Sub-agent" in system_text(sub_first) and "# Sub-agent" not in system_text(parent_first)
    assert [m.role for m in sub_first["messages"] if m.role != "system"] == ["user"]  # no parent context
    [result] = tool_results(session)
    assert result.content[0].text == "SUB ANSWER: sub-ran"
    assert result.details["turns"] == 2 and result.details["tools"] == ["bash"]
    assert result.details["model"] == "faux/faux-1"
    assert result.details["steps"] == ["→ bash echo sub-ran"]
    assert result.details["usage"]["input"] > 0 and result.details["usage"]["output"] > 0
    assert result.usage.total_tokens == result.details["usage"]["totalTokens"]
    assert updates and "→ bash echo sub-ran" in updates[-1].content[0].text
    assert "SUB ANSWER" in updates[-1].content[0].text
    stored = [e["message"] for e in session.store.entries() if e["type"] == "message"]
    assert [m["role"] for m in stored if m["role"] != "system"] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
    ]
    assert [m["toolName"] for m in stored if m["role"] == "toolResult"] == ["subagent"]  # not bash


async def test_by_default_the_sub_agent_gets_the_parents_tools_but_never_subagent():
    faux.set_responses([{"toolCalls": [subagent("look around")]}, {"text": "seen"}, {"text": "ok"}])
    session = await new_session()
    await session.prompt("delegate")
    parent, sub, _ = faux.requests
    assert tool_names(sub) == [n for n in tool_names(parent) if n != "subagent"] and tool_names(sub)


@pytest.mark.parametrize(
    ("tools", "error"),
    [
        (["nope"], "unknown tools: nope (available: bash, edit, find, grep, ls, read, write)"),
        (["read", "subagent"], "a sub-agent cannot start sub-agents"),
    ],
)
async def test_bad_tool_lists_are_tool_errors(tools, error):
    faux.set_responses([{"toolCalls": [subagent("x", tools=tools)]}, {"text": "said: {{lastToolResult}}"}])
    session = await new_session()
    await session.prompt("delegate")
    [result] = tool_results(session)
    assert result.is_error and error in result.content[0].text
    assert len(faux.requests) == 2  # no sub-agent ever asked the model


async def test_aborting_the_parent_aborts_the_sub_agent():
    faux.set_responses(
        [
            {"toolCalls": [subagent("write an essay")]},
            {"text": "word " * 400, "chunkSize": 5, "delayMs": 20},  # the sub-agent: 8 s in all
            {"text": "never asked for"},
        ]
    )
    session = await new_session()
    updates: list = []
    session.subscribe(lambda e: e["type"] == "tool_execution_update" and updates.append(e))
    started = time.monotonic()
    await session.prompt("delegate", wait=False)
    for _ in range(200):
        if any("word" in u["partialResult"].content[0].text for u in updates):
            break
        await asyncio.sleep(0.02)
    assert updates, "the sub-agent streamed no progress"
    session.request_abort()
    await session.wait_for_idle()
    assert time.monotonic() - started < 4
    [result] = tool_results(session)
    assert result.is_error and result.content[0].text.startswith("Sub-agent aborted")
    assert len(faux.requests) == 2


# --- installed by `pi install` ---------------------------------------------------------------


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A throw-away environment with pi-subagent installed by its own ``pi install`` (its home and
    agent dir are temporary too: the manifest is written there)."""
    done = install_example(tmp_path_factory, "pi-subagent")
    assert done.output.splitlines() == ["Installed pi-subagent 0.1.0 (provides: subagent)"]
    return done.venv, done.env
