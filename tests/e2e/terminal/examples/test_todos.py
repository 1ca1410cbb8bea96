"""pi-todos: a todo tool whose list lives in custom session entries (resume, branches).

Unit and in-process runs check the tool and the branch logic; then the package is installed by
the real ``pi install`` into a throw-away environment, whose ``pi`` keeps a list over a ``-c``
resume in print mode and follows ``/tree`` in a real terminal (tmux)."""

from __future__ import annotations

import re

import pytest

from tests.support.examples import (
    branch,
    install_example,
    installed_terminal,
    session_entries,
)
from tests.support.loopback import LoopbackServer, Reply, ToolCall
from tests.support.terminal import tmux_available
from tests.support.venv import venv_pi


def todo_entries(entries: list[dict]) -> list[dict]:
    return [e for e in entries if e.get("type") == "custom" and e.get("customType") == "todos"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    return install_example(tmp_path_factory, "pi-todos")


def todo(action: str, **fields) -> dict:
    return {"name": "todo", "arguments": {"action": action, **fields}}


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
