"""pi-todos: a todo tool whose list lives in custom session entries (resume, branches)."""

from __future__ import annotations

import json

import pi_provider_faux as faux

import pi_host
from pi_host.plugins.loading import load_file_plugin
from tests.example_install import pip_install_example
from tests.examples.example_run import example_module, pi

TODOS = example_module("pi-todos", "pi_todos")


def todo(action: str, **fields) -> dict:
    return {"name": "todo", "arguments": {"action": action, **fields}}


def test_todos_survive_a_resume():
    script = [
        {"toolCalls": [todo("add", text="write tests"), todo("add", text="ship it"), todo("done", id=1)]},
        {"text": "planned: {{lastToolResult}}"},
    ]
    first = pi("-p", "--model", "faux/faux-1", "-e", TODOS, "plan the release", script=script)
    assert first.returncode == 0, first.stderr
    assert "[x] #1 write tests" in first.stdout and "[ ] #2 ship it" in first.stdout
    resumed = pi("-c", "-p", "--model", "faux/faux-1", "-e", TODOS, "/todos")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.startswith("Todos (1/2 done):\n  [x] #1 write tests\n  [ ] #2 ship it\n")


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


def test_installs_with_pip_as_an_entry_point(tmp_path):
    site = pip_install_example("pi-todos", tmp_path / "site")
    out = pi("plugins", "--json", env={"PYTHONPATH": str(site)})
    rows = {row["name"]: row for row in json.loads(out.stdout)}
    assert rows["todos"]["source"] == "installed"
    assert "register_tools" in rows["todos"]["hooks"] and "on_session_tree" in rows["todos"]["hooks"]
