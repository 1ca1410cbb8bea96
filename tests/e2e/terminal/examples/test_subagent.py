"""pi-subagent: a ``subagent`` tool whose task runs in a second, separate session.

In-process runs (the faux provider: the parent and the sub-agent take their scripted answers from
the one queue, in the order they ask) check the tool's result, the sub-agent's tools and system
prompt, progress updates and aborts; then the package is installed by the real ``pi install`` into
a throw-away environment and driven in print mode and in a real terminal (tmux), checking the
parent's session file holds none of the sub-agent's messages.
"""

from __future__ import annotations

import json

import pytest

from tests.support.examples import install_example
from tests.support.interactive import PROMPT_READY, entries, session_files
from tests.support.loopback import LoopbackServer, Reply, write_models_json
from tests.support.terminal import Terminal, tmux_available


def subagent(task: str, **fields) -> dict:
    return {"name": "subagent", "arguments": {"task": task, **fields}}


def messages_by_role(path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for entry in entries(path):
        if entry.get("type") == "message":
            found.setdefault(entry["message"]["role"], []).append(json.dumps(entry["message"]))
    return found


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A throw-away environment with pi-subagent installed by its own ``pi install`` (its home and
    agent dir are temporary too: the manifest is written there)."""
    done = install_example(tmp_path_factory, "pi-subagent")
    assert done.output.splitlines() == ["Installed pi-subagent 0.1.0 (provides: subagent)"]
    return done.venv, done.env


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
    # ctx.spawn keeps the sub-agent in a child session file of its own, linked to the parent's
    path, child = _parent_and_child(session_files(world))
    roles = messages_by_role(path)
    assert len(roles["user"]) == 1 and "SUB-TASK" not in json.dumps(roles["user"])
    assert not any("SUB-AGENT-ANSWER" in m for m in roles["assistant"])


def _parent_and_child(paths):
    headers = {path: json.loads(path.read_text().splitlines()[0]) for path in paths}
    [parent] = [path for path, header in headers.items() if "parentSession" not in header]
    [child] = [path for path, header in headers.items() if header.get("parentSession") == str(parent)]
    return parent, child
