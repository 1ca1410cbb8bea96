"""The sandbox through the real ``pi``: read-only mode, what the model is told, a project that
tries to loosen it, and the one line (and refusal, never a hang) when it cannot run here."""

from __future__ import annotations

import json
import shutil
import sys

import pytest

from tests.e2e.sandbox.helpers import CountingServer, backends, run_json
from tests.support.faux import text, tool_call, tool_calls
from tests.support.loopback import PRINT, LoopbackServer, Reply, write_models_json
from tests.support.pi import run_pi

pytestmark = pytest.mark.skipif(backends()["landlock"] is not None, reason=backends()["landlock"] or "")


def test_read_only_writes_nothing(isolated_environment):
    work = isolated_environment["work"]
    script = [
        tool_calls(("bash", {"command": "echo x > made.txt"}), ("write", {"path": "w.txt", "content": "x"})),
        text("done"),
    ]
    run = run_json("--sandbox", "read-only", "--tools", "bash,write", script=script, cwd=work)
    by_name = {t.name: t.text for t in run.tools}
    assert "made.txt: Permission denied" in by_name["bash"]
    assert by_name["write"] == "sandbox read-only: write cannot change files"
    assert not (work / "made.txt").exists() and not (work / "w.txt").exists()


def test_the_model_is_told_the_sandbox_rules(isolated_environment):
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    with LoopbackServer([Reply("ok")]) as server:
        write_models_json(agent, server.url)
        out = run_pi(*PRINT, "--sandbox", "workspace-write", "hi", cwd=work)
        assert out.returncode == 0, out.stderr
    system = json.dumps(server.requests[0]["messages"][0])
    assert "Tool commands run in an OS sandbox (workspace-write, landlock)" in system
    assert "Network access is off" in system


def test_a_trusted_project_cannot_loosen_the_users_sandbox(isolated_environment):
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    (agent / "settings.json").write_text(json.dumps({"sandbox": {"mode": "workspace-write"}}))
    (work / ".pi").mkdir()
    (work / ".pi" / "settings.json").write_text(
        json.dumps({"sandbox": {"mode": "off", "writableRoots": ["/"]}})
    )
    script = [tool_call("bash", command="echo x > /etc/pi-sandbox-test && echo wrote"), text("done")]
    run = run_json("-a", "--tools", "bash", script=script, cwd=work)
    assert "Permission denied" in run.tools[0].text and "wrote" not in run.tools[0].text
    assert (
        "pi: sandbox.mode 'off' from the project: a project may only make the sandbox stricter" in run.stderr
    )


def test_when_the_sandbox_cannot_run_commands_are_refused_in_one_line(isolated_environment, tmp_path):
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    (agent / "settings.json").write_text(json.dumps({"sandbox": {"backend": "bwrap"}}))
    empty = tmp_path / "empty-path"
    empty.mkdir()
    script = [tool_call("bash", command="echo hi"), text("done")]
    run = run_json(
        "--sandbox",
        "workspace-write",
        "--tools",
        "bash",
        script=script,
        cwd=work,
        env={"PATH": str(empty)},
        timeout=60,
    )
    assert run.returncode == 0
    assert run.tools[0].is_error and run.tools[0].text == (
        "sandbox workspace-write: bubblewrap (bwrap) is not installed; the command was not run "
        "(pi --sandbox off runs commands without it)"
    )
    assert run.stderr.count("pi: sandbox workspace-write: bubblewrap (bwrap) is not installed") == 1


def test_an_unknown_mode_is_one_line_and_the_strictest(isolated_environment):
    work = isolated_environment["work"]
    run = run_json(
        "--sandbox",
        "workspace",
        "--tools",
        "bash",
        script=[tool_call("bash", command="touch a"), text("d")],
        cwd=work,
    )
    assert (
        "pi: sandbox: --sandbox 'workspace' is not one of off, workspace-write, read-only; using read-only"
        in run.stderr
    )
    assert not (work / "a").exists()


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_network_off_cuts_the_host_but_keeps_a_loopback_of_its_own(isolated_environment):
    work = isolated_environment["work"]
    with CountingServer() as server:
        command = (
            f"curl -sS -m 5 http://127.0.0.1:{server.port}/; "
            f"{sys.executable} -m http.server 8765 --bind 127.0.0.1 > /dev/null 2>&1 & "
            "for i in $(seq 100); do code=$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:8765/); "
            '[ "$code" = 200 ] && break; sleep 0.1; done; echo "own server $code"'
        )
        run = run_json(
            "--sandbox",
            "workspace-write",
            "--tools",
            "bash",
            script=[tool_call("bash", command=command), text("d")],
            cwd=work,
        )
    assert server.hits == 0
    assert "Couldn't connect" in run.tools[0].text and "own server 200" in run.tools[0].text
