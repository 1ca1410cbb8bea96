"""The bash tool's shell with the sandbox's launcher, in process: what a command may write, that
nothing outlives it (and the line that says so), a failure to start is one line, never a hang."""

from __future__ import annotations

import os
import time
import uuid

import pi_tool_bash
import pytest
from pi_sandbox.launch import Capabilities
from pi_sandbox.policy import build_policy
from pi_sandbox.probe import capabilities
from pi_sandbox.session import SessionSandbox

from pi_host.loop.tools import ToolContext, ToolError
from pi_host.protocol.abort import AbortController

CAPS = capabilities()
needs_landlock = pytest.mark.skipif(not CAPS.landlock_abi, reason="Landlock is not available on this kernel")


@pytest.fixture
def outside():
    path = f"/var/tmp/pi-sandbox-unit-{uuid.uuid4().hex[:10]}"
    os.mkdir(path)
    yield path
    for name in os.listdir(path):
        os.unlink(os.path.join(path, name))
    os.rmdir(path)


def bash(tmp_path, mode="workspace-write", caps=CAPS, backend="landlock", network="off"):
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    policy = build_policy(
        mode, {"network": network}, None, str(project), str(tmp_path / "agent"), str(tmp_path)
    )
    tool = pi_tool_bash.create_tool()
    tool.shell.launcher = SessionSandbox(policy, backend).launcher(caps)
    ctx = ToolContext(cwd=str(project), agent_dir=str(tmp_path / "agent"))

    async def run(command, timeout=30):
        return await tool.execute(
            "t", {"command": command, "timeout": timeout}, AbortController().signal, None, ctx
        )

    return run, project


def text(result):
    return "".join(block.text for block in result.content)


@needs_landlock
@pytest.mark.parametrize("namespaces", [True, False], ids=["namespaces", "landlock-only"])
async def test_writes_inside_the_project_only(tmp_path, outside, namespaces):
    caps = Capabilities(CAPS.landlock_abi, namespaces and CAPS.namespaces, None)
    run, project = bash(tmp_path, caps=caps)
    result = await run(f"echo in > inside.txt; echo out > {outside}/x; echo code=$?")
    assert (project / "inside.txt").read_text() == "in\n"
    assert not os.path.exists(f"{outside}/x")
    assert "Permission denied" in text(result) and "code=1" in text(result)


@needs_landlock
@pytest.mark.parametrize("namespaces", [True, False], ids=["namespaces", "landlock-only"])
async def test_nothing_outlives_the_command(tmp_path, namespaces):
    caps = Capabilities(CAPS.landlock_abi, namespaces and CAPS.namespaces, None)
    run, _project = bash(tmp_path, caps=caps)
    marker = f"pi-unit-{uuid.uuid4().hex[:10]}"
    result = await run(f"setsid bash -c 'exec -a {marker} sleep 60' > /dev/null 2>&1 & echo started")
    assert "started" in text(result)
    assert "[sandbox: stopped 1 process the command left running" in text(result)
    deadline = time.monotonic() + 5  # killed processes may take a moment to be reaped
    while _running(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(marker)


@needs_landlock
async def test_read_only_writes_nothing_but_dev_null(tmp_path):
    run, project = bash(tmp_path, mode="read-only")
    result = await run("echo x > /dev/null && echo ok; echo y > new.txt")
    assert "ok" in text(result) and not (project / "new.txt").exists()


async def test_an_unavailable_sandbox_refuses_in_one_line(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    policy = build_policy("workspace-write", {}, None, str(project), str(tmp_path), str(tmp_path))
    tool = pi_tool_bash.create_tool()
    tool.shell.launcher = SessionSandbox(policy, "none", "not available on macOS").launcher(
        Capabilities(platform="macOS")
    )
    with pytest.raises(ToolError) as caught:
        await tool.execute(
            "t", {"command": "echo hi"}, AbortController().signal, None, ToolContext(cwd=str(project))
        )
    assert str(caught.value) == (
        "sandbox workspace-write: not available on macOS; the command was not run "
        "(pi --sandbox off runs commands without it)"
    )


def test_write_tools_are_checked_against_the_same_rules(tmp_path, outside):
    project = tmp_path / "proj"
    project.mkdir()
    policy = build_policy("workspace-write", {}, None, str(project), str(tmp_path / "agent"), str(tmp_path))
    box = SessionSandbox(policy, "landlock")
    assert box.check_write("write", {"path": "src/a.py"}, str(project)) is None
    assert "outside the writable folders" in box.check_write("write", {"path": f"{outside}/a"}, str(project))
    assert "outside the writable folders" in box.check_write(
        "edit", {"path": ".pi/settings.json"}, str(project)
    )
    os.link(__file__, project / "linked.py") if os.stat(__file__).st_dev == os.stat(project).st_dev else None
    if (project / "linked.py").exists():
        assert "hard link" in box.check_write("edit", {"path": "linked.py"}, str(project))
    read_only = SessionSandbox(
        build_policy("read-only", {}, None, str(project), str(tmp_path), str(tmp_path)), "landlock"
    )
    assert (
        read_only.check_write("write", {"path": "a"}, str(project))
        == "sandbox read-only: write cannot change files"
    )


@needs_landlock
async def test_a_timeout_still_ends_the_command_and_everything_it_started(tmp_path):
    run, _project = bash(tmp_path)
    marker = f"pi-unit-{uuid.uuid4().hex[:10]}"
    started = time.monotonic()
    with pytest.raises(ToolError) as caught:
        await run(f"setsid bash -c 'exec -a {marker} sleep 60' > /dev/null 2>&1 & sleep 30", timeout=1)
    assert "Command timed out" in str(caught.value) and time.monotonic() - started < 10
    deadline = time.monotonic() + 5  # killed processes may take a moment to be reaped
    while _running(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(marker)


def _running(marker: str) -> bool:
    """A process whose command line holds ``marker`` (processes may end while we look)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if marker.encode() in handle.read():
                    return True
        except OSError:
            continue
    return False
