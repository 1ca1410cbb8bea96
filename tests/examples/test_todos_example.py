# ruff: noqa: F811  (the `world` fixture is imported from tests.interactive.test_e2e)
"""pi-todos: a todo tool whose list lives in custom session entries (resume, branches).

Unit and in-process runs check the tool and the branch logic; then the package is installed by
the real ``pi install`` into a throw-away environment, whose ``pi`` keeps a list over a ``-c``
resume in print mode and follows ``/tree`` in a real terminal (tmux)."""

from __future__ import annotations

import json
import re

import pi_provider_faux as faux
import pytest

import pi_host
from pi_host.plugins.loading import load_file_plugin
from tests.example_install import venv_pi
from tests.examples.example_run import (
    branch,
    example_module,
    install_example,
    installed_row,
    installed_terminal,
    pi,
    session_entries,
    tool_results,
)
from tests.interactive.loopback import LoopbackServer, Reply, ToolCall
from tests.interactive.terminal import tmux_available
from tests.interactive.test_e2e import world  # noqa: F401 (a fixture)

TODOS = example_module("pi-todos", "pi_todos")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    return install_example(tmp_path_factory, "pi-todos")


def todo(action: str, **fields) -> dict:
    return {"name": "todo", "arguments": {"action": action, **fields}}


def test_a_new_session_starts_empty():
    out = pi("-p", "--no-session", "--model", "faux/faux-1", "-e", TODOS, "/todos")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("No todos.")


def test_bad_actions_are_tool_errors():
    script = [{"toolCalls": [todo("done", id=7)]}, {"text": "said: {{lastToolResult}}"}]
    out = pi("-p", "--no-session", "--model", "faux/faux-1", "-e", TODOS, "finish", script=script)
    assert out.returncode == 0, out.stderr
    assert "no todo #7" in out.stdout


async def test_the_list_follows_the_branch(capsys):
    plugin = load_file_plugin(TODOS)
    faux.set_responses(
        [
            {"toolCalls": [todo("add", text="first")]},
            {"text": "added first"},
            {"toolCalls": [todo("add", text="second")]},
            {"text": "added second"},
        ]
    )
    session = await pi_host.create_session(model="faux/faux-1", plugins=[plugin], settings={})
    await session.prompt("add first")
    after_first = session.store.leaf_id()
    await session.prompt("add second")
    capsys.readouterr()
    assert await session.prompt("/todos") == "handled"
    assert "#2 second" in capsys.readouterr().out
    entries = [e for e in session.store.entries() if e["type"] == "custom"]
    assert [len(e["data"]["items"]) for e in entries] == [1, 2]
    await session.navigate_tree(after_first)
    await session.prompt("/todos")
    shown = capsys.readouterr().out
    assert "#1 first" in shown and "second" not in shown
    assert all(m.role != "custom" for m in session.messages)


async def test_each_results_details_hold_the_list_as_that_call_left_it():
    plugin = load_file_plugin(TODOS)
    calls = [todo("add", text="a"), todo("add", text="b"), todo("done", id=1)]
    faux.set_responses([{"toolCalls": calls}, {"text": "ok"}])
    session = await pi_host.create_session(model="faux/faux-1", plugins=[plugin], settings={})
    await session.prompt("plan")
    details = [m.details["items"] for m in session.messages if m.role == "toolResult"]
    assert [[(i["text"], i["done"]) for i in items] for items in details] == [
        [("a", False)],
        [("a", False), ("b", False)],
        [("a", True), ("b", False)],
    ]  # not three views of the final list
    stored = [
        e["message"]["details"]["items"]
        for e in session.store.entries()
        if e.get("type") == "message" and e["message"]["role"] == "toolResult"
    ]
    assert stored == details


def todo_entries(entries: list[dict]) -> list[dict]:
    return [e for e in entries if e.get("type") == "custom" and e.get("customType") == "todos"]


# --- installed by `pi install` ---------------------------------------------------------------


def test_installed_by_pi_install_the_list_survives_a_resume(installed, isolated_environment):
    row = installed_row(installed, "todos")
    assert {"register_tools", "register_commands", "on_session_start", "on_session_tree"} <= set(row["hooks"])

    work, agent = isolated_environment["work"], isolated_environment["agent"]
    script = [
        {"toolCalls": [todo("add", text="write tests"), todo("add", text="ship it"), todo("done", id=1)]},
        {"text": "planned: {{lastToolResult}}"},
    ]
    first = venv_pi(
        installed.venv,
        "-p",
        "--model",
        "faux/faux-1",
        "plan the release",
        cwd=work,
        PI_FAUX_SCRIPT=json.dumps(script),
    )
    assert first.returncode == 0, first.stderr
    assert "[x] #1 write tests" in first.stdout and "[ ] #2 ship it" in first.stdout
    entries = session_entries(agent)
    assert [[i["done"] for i in e["data"]["items"]] for e in todo_entries(entries)] == [
        [False],
        [False, False],
        [True, False],
    ]
    details = [m["details"] for m in tool_results(entries)]
    assert details == [e["data"] for e in todo_entries(entries)]  # each call's own list
    resumed = venv_pi(installed.venv, "-c", "-p", "/todos", cwd=work)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.startswith("Todos (1/2 done):\n  [x] #1 write tests\n  [ ] #2 ship it\n")
    fresh = venv_pi(installed.venv, "-p", "--no-session", "/todos", cwd=work)  # another session
    assert fresh.stdout.startswith("No todos.")


@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_interactive_todos_are_shown_and_follow_the_tree(installed, world):
    def add(text: str) -> ToolCall:
        return ToolCall("todo", {"action": "add", "text": text})

    replies = [
        Reply("", tool_calls=[add("write tests"), add("ship it")]),
        Reply("planned two"),
        Reply("", tool_calls=[add("third thing")]),
        Reply("added third"),
        Reply("", tool_calls=[add("fourth on the branch")]),
        Reply("added fourth"),
    ]
    with LoopbackServer(replies) as server:
        with installed_terminal(installed, world, server, width=100, height=34) as term:
            term.send("plan it")
            term.press("Enter")
            term.wait_for("planned two")
            term.wait_gone("esc to interrupt")
            term.send("/todos")
            term.press("Enter")
            term.wait_for(
                re.compile(r"planned two\s+Todos \(0/2 done\):\s+\[ \] #1 write tests\s+\[ \] #2 ship it")
            )
            term.send("add a third")
            term.press("Enter")
            term.wait_for("added third")
            term.wait_gone("esc to interrupt")
            term.send("/tree")
            term.press("Enter")
            term.wait_for("Session tree")
            term.send("planned two")  # search: the first answer
            term.wait_for(re.compile(r"›.*assistant: planned two"), scrollback=False)
            term.press("Enter")
            term.wait_for("Summarize branch?")
            term.press("Enter")  # No summary
            term.wait_for("Navigated to the selected point")
            term.send("/todos")
            term.press("Enter")
            shown = term.wait_for(re.compile(r"Navigated to the selected point(.|\n)*Todos \(0/2 done\)"))
            after = shown[shown.rindex("Navigated to the selected point") :]
            assert "#2 ship it" in after and "third thing" not in after
            term.send("one more")
            term.press("Enter")
            term.wait_for("added fourth")
            term.wait_gone("esc to interrupt")
            screen = term.screen()
            assert "[ ] #3 fourth on the branch" in screen  # numbered after the branch's two
            term.press("C-d")
            assert term.wait_exit() == 0
        assert len(server.requests) == 6
    entries = session_entries(world["agent"])
    lists = [[item["text"] for item in e["data"]["items"]] for e in todo_entries(entries)]
    assert lists == [
        ["write tests"],
        ["write tests", "ship it"],
        ["write tests", "ship it", "third thing"],
        ["write tests", "ship it", "fourth on the branch"],
    ]
    on_branch = branch(entries, todo_entries(entries)[-1]["id"])
    assert [e["data"]["items"][-1]["text"] for e in todo_entries(on_branch)] == [
        "write tests",
        "ship it",
        "fourth on the branch",
    ]  # the third is on the abandoned branch
    resumed = venv_pi(installed.venv, "-c", "-p", "/todos", cwd=world["work"])
    assert resumed.stdout.startswith(
        "Todos (0/3 done):\n  [ ] #1 write tests\n  [ ] #2 ship it\n  [ ] #3 fourth on the branch\n"
    )
