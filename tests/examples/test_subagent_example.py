# ruff: noqa: F811  (the `world` fixture is imported from tests.interactive.test_e2e)
"""pi-subagent: a ``subagent`` tool whose task runs in a second, separate session.

In-process runs (the faux provider: the parent and the sub-agent take their scripted answers from
the one queue, in the order they ask) check the tool's result, the sub-agent's tools and system
prompt, progress updates and aborts; then the package is installed by the real ``pi install`` into
a throw-away environment and driven in print mode and in a real terminal (tmux), checking the
parent's session file holds none of the sub-agent's messages.
"""

from __future__ import annotations

import asyncio
import json
import time

import pi_provider_faux as faux
import pytest

import pi_host
from pi_host.plugins.loading import load_file_plugin
from tests.example_install import venv_pi
from tests.examples.example_run import example_module, install_example
from tests.interactive.loopback import LoopbackServer, Reply, write_models_json
from tests.interactive.terminal import Terminal, tmux_available
from tests.interactive.test_e2e import PROMPT_READY, entries, session_files, world  # noqa: F401

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


def messages_by_role(path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for entry in entries(path):
        if entry.get("type") == "message":
            found.setdefault(entry["message"]["role"], []).append(json.dumps(entry["message"]))
    return found


def test_installed_by_pi_install_the_parent_gets_the_answer_and_keeps_its_file_clean(
    installed, isolated_environment
):
    venv, install_env = installed
    listed = venv_pi(venv, "list", **install_env)
    assert "pi-subagent 0.1.0  [user]" in listed.stdout
    assert "    pi_host: subagent = pi_subagent" in listed.stdout
    rows = {r["name"]: r for r in json.loads(venv_pi(venv, "plugins", "--json").stdout)}
    assert rows["subagent"]["source"] == "installed" and rows["subagent"]["origin"] == "pi-subagent"
    assert "register_tools" in rows["subagent"]["hooks"]

    script = [
        {"toolCalls": [subagent("SUB-TASK: what is six times seven?", tools=["read"])]},
        {"text": "SUB-ANSWER forty-two"},
        {"text": "parent got: {{lastToolResult}}"},
    ]
    run = venv_pi(venv, "-p", "--model", "faux/faux-1", "delegate it", PI_FAUX_SCRIPT=json.dumps(script))
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "parent got: SUB-ANSWER forty-two"
    [path] = (isolated_environment["agent"] / "sessions").rglob("*.jsonl")  # no file for the sub-agent
    roles = messages_by_role(path)
    assert len(roles["user"]) == 1 and "delegate it" in roles["user"][0]
    assert len(roles["assistant"]) == 2  # the parent's tool call and its answer, not the sub-agent's
    assert "SUB-TASK" in roles["assistant"][0] and "parent got" in roles["assistant"][1]
    [result] = roles["toolResult"]
    assert "SUB-ANSWER forty-two" in result and '"turns": 1' in result
    assert "# Sub-agent" not in path.read_text()


@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_interactive_subagent_call_reaches_the_model_as_a_separate_session(installed, world):
    venv, _ = installed
    env = {k: v for k, v in world["env"].items() if k != "PYTHONPATH"}
    replies = [
        Reply.tool("subagent", {"task": "SUB-TASK find the answer", "tools": ["read"]}),
        Reply("SUB-AGENT-ANSWER 42"),
        Reply("parent heard the sub-agent"),
    ]
    with LoopbackServer(replies) as server:
        write_models_json(world["agent"], server.url)
        argv = [str(venv / "bin" / "pi"), "--model", "loop/loop-1"]
        with Terminal(argv, env=env, cwd=world["work"], width=110, height=34) as term:
            term.wait_for(PROMPT_READY, timeout=20)
            term.send("delegate it")
            term.press("Enter")
            term.wait_for("parent heard the sub-agent")
            assert "SUB-AGENT-ANSWER 42" in term.scrollback()  # the tool result is shown
            term.wait_gone("esc to interrupt")
            term.press("C-d")
            assert term.wait_exit() == 0
        parent, sub, parent_again = server.requests
    names = [[t["function"]["name"] for t in r.get("tools") or ()] for r in (parent, sub)]
    assert "subagent" in names[0] and names[1] == ["read"]
    systems = [[m["content"] for m in r["messages"] if m["role"] == "system"] for r in (parent, sub)]
    assert "# Sub-agent" in json.dumps(systems[1]) and "# Sub-agent" not in json.dumps(systems[0])
    assert [m["role"] for m in sub["messages"] if m["role"] != "system"] == ["user"]
    assert "SUB-AGENT-ANSWER 42" in json.dumps([m for m in parent_again["messages"] if m["role"] == "tool"])
    [path] = session_files(world)
    roles = messages_by_role(path)
    assert len(roles["user"]) == 1 and "SUB-TASK" not in json.dumps(roles["user"])
    assert not any("SUB-AGENT-ANSWER" in m for m in roles["assistant"])
