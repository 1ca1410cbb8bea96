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
from tests.support.interactive import entries
from tests.support.venv import venv_pi


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
    # ctx.spawn keeps the sub-agent in a child session file of its own, linked to the parent's
    path, child = _parent_and_child(list((isolated_environment["agent"] / "sessions").rglob("*.jsonl")))
    roles = messages_by_role(path)
    assert len(roles["user"]) == 1 and "delegate it" in roles["user"][0]
    assert len(roles["assistant"]) == 2  # the parent's tool call and its answer, not the sub-agent's
    assert "SUB-TASK" in roles["assistant"][0] and "parent got" in roles["assistant"][1]
    [result] = roles["toolResult"]
    assert "SUB-ANSWER forty-two" in result and '"turns": 1' in result
    assert "# Sub-agent" not in path.read_text()


def _parent_and_child(paths):
    headers = {path: json.loads(path.read_text().splitlines()[0]) for path in paths}
    [parent] = [path for path, header in headers.items() if "parentSession" not in header]
    [child] = [path for path, header in headers.items() if header.get("parentSession") == str(parent)]
    return parent, child
