"""pi-todos: a todo tool whose list lives in custom session entries (resume, branches).

Unit and in-process runs check the tool and the branch logic; then the package is installed by
the real ``pi install`` into a throw-away environment, whose ``pi`` keeps a list over a ``-c``
resume in print mode and follows ``/tree`` in a real terminal (tmux)."""

from __future__ import annotations

import json

import pytest

from tests.support.examples import (
    install_example,
    installed_row,
    session_entries,
    tool_results,
)
from tests.support.venv import venv_pi


def todo_entries(entries: list[dict]) -> list[dict]:
    return [e for e in entries if e.get("type") == "custom" and e.get("customType") == "todos"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    return install_example(tmp_path_factory, "pi-todos")


def todo(action: str, **fields) -> dict:
    return {"name": "todo", "arguments": {"action": action, **fields}}


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
