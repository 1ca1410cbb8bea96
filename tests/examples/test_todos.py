"""pi-todos: a todo tool whose list lives in custom session entries (resume, branches).

Unit and in-process runs check the tool and the branch logic; then the package is installed by
the real ``pi install`` into a throw-away environment, whose ``pi`` keeps a list over a ``-c``
resume in print mode and follows ``/tree`` in a real terminal (tmux)."""

from __future__ import annotations

import pi_provider_faux as faux
import pytest

import pi_host
from pi_host.plugins.loading import load_file_plugin
from tests.support.examples import (
    example_module,
    install_example,
)

TODOS = example_module("pi-todos", "pi_todos")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    return install_example(tmp_path_factory, "pi-todos")


def todo(action: str, **fields) -> dict:
    return {"name": "todo", "arguments": {"action": action, **fields}}


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


# --- installed by `pi install` ---------------------------------------------------------------
