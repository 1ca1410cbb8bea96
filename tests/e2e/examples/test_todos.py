"""pi-todos: a todo tool whose list lives in custom session entries (resume, branches).

Unit and in-process runs check the tool and the branch logic; then the package is installed by
the real ``pi install`` into a throw-away environment, whose ``pi`` keeps a list over a ``-c``
resume in print mode and follows ``/tree`` in a real terminal (tmux)."""

from __future__ import annotations

import pytest

from tests.support.examples import (
    example_module,
    install_example,
)
from tests.support.pi import run_pi

TODOS = example_module("pi-todos", "pi_todos")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    return install_example(tmp_path_factory, "pi-todos")


def todo(action: str, **fields) -> dict:
    return {"name": "todo", "arguments": {"action": action, **fields}}


def test_a_new_session_starts_empty():
    out = run_pi("-p", "--no-session", "--model", "faux/faux-1", "-e", TODOS, "/todos")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("No todos.")


def test_bad_actions_are_tool_errors():
    script = [{"toolCalls": [todo("done", id=7)]}, {"text": "said: {{lastToolResult}}"}]
    out = run_pi("-p", "--no-session", "--model", "faux/faux-1", "-e", TODOS, "finish", script=script)
    assert out.returncode == 0, out.stderr
    assert "no todo #7" in out.stdout
