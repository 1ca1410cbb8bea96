"""pi-permission-gate: dangerous commands are denied without a UI and asked about with one.

The rules are checked directly and with ``-e``; then the package is installed by the real
``pi install`` into a throw-away environment, whose ``pi`` denies in print mode, asks an RPC
client, and asks in a real terminal (tmux) where a key answers the dialog."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pi_host.rpc import RpcClient
from tests.support.examples import (
    install_example,
    installed_row,
    result_text,
    session_entries,
    tool_results,
)
from tests.support.venv import venv_pi

DELETE_JUNK = [
    {"toolCalls": [{"name": "bash", "arguments": {"command": "rm -rf junk"}}]},
    {"text": "result: {{lastToolResult}}"},
]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    return install_example(tmp_path_factory, "pi-permission-gate")


def make_junk(work: Path) -> Path:
    junk = work / "junk"
    junk.mkdir()
    (junk / "keep.txt").write_text("x")
    return junk


def test_installed_by_pi_install_it_denies_in_print_mode(installed, isolated_environment):
    row = installed_row(installed, "permission-gate")
    assert row["hooks"] == ["on_tool_call"]
    work = isolated_environment["work"]
    junk = make_junk(work)
    script = json.dumps(DELETE_JUNK)
    out = venv_pi(installed.venv, "-p", "--model", "faux/faux-1", "clean up", cwd=work, PI_FAUX_SCRIPT=script)
    assert out.returncode == 0, out.stderr
    assert "pi-permission-gate: blocked a dangerous command (recursive forced delete)" in out.stdout
    assert (junk / "keep.txt").exists()
    [result] = tool_results(session_entries(isolated_environment["agent"]))
    assert "no user is present to approve it" in result_text(result)


@pytest.mark.parametrize("confirmed", [True, False])
def test_rpc_client_answers_the_confirm_dialog_of_the_installed_plugin(installed, confirmed):
    work = Path.cwd()
    junk = make_junk(work)
    env = dict(os.environ, PI_FAUX_SCRIPT=json.dumps(DELETE_JUNK))
    env.pop("PYTHONPATH", None)  # only what is installed in the environment loads
    asked: list[dict] = []

    def answer(request: dict) -> object:
        if request["method"] != "confirm":
            return None
        asked.append(request)
        return {"confirmed": confirmed}

    argv = [str(installed.pi), "--mode", "rpc"]  # no -e: the installed plugin asks
    with RpcClient(argv, args=["--no-session", "--model", "faux/faux-1"], cwd=str(work), env=env) as client:
        client.on_ui_request(answer)
        client.prompt_and_wait("clean up", timeout=60)
        text = client.get_last_assistant_text()["text"]
    assert len(asked) == 1
    assert asked[0]["title"] == "Allow a dangerous command?"
    assert "rm -rf junk" in asked[0]["message"] and "recursive forced delete" in asked[0]["message"]
    if confirmed:
        assert not junk.exists()
        assert "pi-permission-gate" not in text
    else:
        assert (junk / "keep.txt").exists()
        assert "the user declined this command" in text
