"""bash: provider keys in the environment, the capped output log, processes that escape the group.

Each behaviour is checked on the tool and through the real ``pi`` command.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal as signals
import time

import pi_tool_bash
import pytest
from pi_tool_bash.output import OutputCollector
from pi_tool_bash.tool import log_cap

from pi_host.lib.toolkit import LocalShell

from .helpers import pi_cli, run, run_error, text_of
from .test_bash import alive, wait_dead

needs_setsid = pytest.mark.skipif(shutil.which("setsid") is None, reason="setsid not installed")
KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")


@pytest.fixture
def tool():
    return pi_tool_bash.create_tool()


@pytest.fixture
def escaped_pids():
    """Pids of detached test processes, killed (by pid) at the end whatever happened."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        try:
            os.kill(pid, signals.SIGKILL)
        except OSError:
            pass


def write_settings(agent_dir, settings: dict) -> None:
    (agent_dir / "settings.json").write_text(json.dumps(settings))


def read_pid(path, seconds: float = 3.0) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.02)
    raise AssertionError(f"no pid in {path}")


# -- item 3: provider keys -------------------------------------------------------------------------


async def test_provider_keys_inherited_by_default_scrubbed_on_request(tool, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("KEEP_ME", "kept")
    command = 'echo "${OPENAI_API_KEY-unset}|${KEEP_ME-unset}"'
    keys = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
    result = await run(tool, {"command": command}, str(tmp_path), provider_key_variables=keys)
    assert text_of(result) == "sk-secret|kept\n"
    result = await run(
        tool, {"command": command}, str(tmp_path),
        provider_key_variables=keys, settings={"shellScrubProviderKeys": True},
    )  # fmt: skip
    assert text_of(result) == "unset|kept\n"


@pytest.mark.parametrize("scrub", [False, True])
def test_cli_env_output_lacks_provider_keys_only_when_scrubbing(tmp_path, isolated_environment, scrub):
    write_settings(isolated_environment["agent"], {"shellScrubProviderKeys": scrub})
    script = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "env"}}]},
        {"text": "{{lastToolResult}}"},
    ]
    env = {"ANTHROPIC_API_KEY": "sk-ant-secret", "OPENAI_API_KEY": "sk-oa-secret", "KEEP_ME": "kept"}
    done, _ = pi_cli("-p", "--tools", "bash", "go", script=script, cwd=str(tmp_path), env=env)
    assert done.returncode == 0, done.stderr
    lines = set(done.stdout.splitlines())
    assert "KEEP_ME=kept" in lines
    present = {"ANTHROPIC_API_KEY=sk-ant-secret", "OPENAI_API_KEY=sk-oa-secret"} & lines
    assert present == (set() if scrub else {"ANTHROPIC_API_KEY=sk-ant-secret", "OPENAI_API_KEY=sk-oa-secret"})
    assert ("sk-ant-secret" in done.stdout) is not scrub


# -- item 7: the output log cap --------------------------------------------------------------------


def test_collector_caps_the_log_and_keeps_its_head():
    data = b"".join(b"%07d\n" % i for i in range(400_000))  # 3.2 MB
    collector = OutputCollector(max_log_bytes=100_000)
    for start in range(0, len(data), 65536):
        collector.add(data[start : start + 65536])
    collector.close()
    try:
        with open(collector.full_output_path, "rb") as handle:
            assert handle.read() == data[:100_000]
        text, details = collector.display()
        assert text.split("\n\n[")[0].splitlines()[-1] == "0399999"  # the tail still shows
        assert "holds only the first 97.7KB of 3.1MB (shellOutputLogMaxBytes)" in text
        assert details["fullOutputCapped"] is True and details["fullOutputPath"] == collector.full_output_path
    finally:
        os.unlink(collector.full_output_path)


def test_collector_without_cap_keeps_everything():
    data = b"x\n" * 1_000_000
    collector = OutputCollector(max_log_bytes=0)
    for start in range(0, len(data), 65536):
        collector.add(data[start : start + 65536])
    collector.close()
    try:
        assert os.path.getsize(collector.full_output_path) == len(data)
        assert not collector.log_capped and "shellOutputLogMaxBytes" not in collector.display()[0]
    finally:
        os.unlink(collector.full_output_path)


def test_log_cap_setting_values():
    default = 100 * 1024 * 1024
    assert log_cap({}) == default and log_cap(None) == default
    assert log_cap({"shellOutputLogMaxBytes": 0}) == 0
    assert log_cap({"shellOutputLogMaxBytes": 1234}) == 1234
    for bad in (-1, "10", True, 1.5):
        assert log_cap({"shellOutputLogMaxBytes": bad}) == default


def test_cli_yes_log_is_capped_and_the_result_says_where(tmp_path, isolated_environment):
    write_settings(isolated_environment["agent"], {"shellOutputLogMaxBytes": 1_000_000})
    temp = tmp_path / "tmp"
    temp.mkdir()
    script = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "yes | head -c 30000000"}}]},
        {"text": "{{lastToolResult}}"},
    ]
    done, _ = pi_cli(
        "-p", "--tools", "bash", "go", script=script, cwd=str(tmp_path), env={"TMPDIR": str(temp)}
    )
    assert done.returncode == 0, done.stderr
    match = re.search(
        r"holds only the first 976\.6KB of 28\.6MB \(shellOutputLogMaxBytes\): (\S+\.log)\]", done.stdout
    )
    assert match, done.stdout[-400:]
    log = match.group(1)
    assert os.path.dirname(log) == str(temp)
    assert os.path.getsize(log) == 1_000_000
    assert done.stdout.split("\n\n[")[0].splitlines()[-2000:] == ["y"] * 2000


# -- item 8: processes that leave the group --------------------------------------------------------


@needs_setsid
async def test_escaped_child_does_not_hold_the_call(tool, tmp_path, escaped_pids):
    pid_file = tmp_path / "escaped.pid"
    started = time.monotonic()
    command = f"setsid sleep 30 & echo $! > {pid_file}; echo hi"
    result = await asyncio.wait_for(run(tool, {"command": command}, str(tmp_path)), 10)
    elapsed = time.monotonic() - started
    pid = int(pid_file.read_text())
    escaped_pids.append(pid)
    assert elapsed < 3
    assert text_of(result).startswith("hi\n\n[The shell exited but a process that left its process group")
    assert f"(pid {pid})" in text_of(result)
    assert result.structured_content["exit_code"] == 0 and not result.is_error
    assert alive(pid)  # detached on purpose: left running


@needs_setsid
async def test_escaped_writer_is_read_for_the_grace_period_then_left(tmp_path, escaped_pids):
    chunks: list[bytes] = []
    pid_file = tmp_path / "escaped.pid"
    command = f"setsid sh -c 'while :; do echo tick; sleep 0.05; done' & echo $! > {pid_file}"
    started = time.monotonic()
    result = await asyncio.wait_for(
        LocalShell().exec(command, cwd=str(tmp_path), env=dict(os.environ), on_data=chunks.append), 10
    )
    elapsed = time.monotonic() - started
    escaped_pids.append(int(pid_file.read_text()))
    assert result.exit_code == 0 and not result.timed_out
    assert escaped_pids[0] in result.output_left_open
    assert 0.9 < elapsed < 3
    assert b"".join(chunks).count(b"tick") >= 5  # its output kept coming during the grace period


@needs_setsid
async def test_timeout_kills_children_that_left_the_group(tool, tmp_path, escaped_pids):
    pid_file = tmp_path / "escaped.pid"
    command = f"setsid sleep 30 & echo $! > {pid_file}; sleep 30"
    message = await asyncio.wait_for(run_error(tool, {"command": command, "timeout": 0.5}, str(tmp_path)), 10)
    escaped_pids.append(int(pid_file.read_text()))
    assert message == "Command timed out after 0.5 seconds"
    dead = await wait_dead(escaped_pids[0])
    assert dead


async def test_background_job_in_the_group_still_holds_the_call(tmp_path):
    # pi's behaviour: a background process that keeps the output open keeps the call running.
    started = time.monotonic()
    result = await LocalShell().exec(
        "sleep 1 & echo bye", cwd=str(tmp_path), env=dict(os.environ), on_data=lambda _: None
    )
    assert time.monotonic() - started >= 0.9
    assert result.output_left_open is None and result.exit_code == 0


@needs_setsid
def test_cli_setsid_child_ends_quickly_with_empty_stderr(tmp_path, escaped_pids):
    pid_file = tmp_path / "escaped.pid"
    script = [
        {
            "toolCalls": [
                {"name": "bash", "arguments": {"command": f"setsid sleep 30 & echo $! > {pid_file}; echo hi"}}
            ]
        },
        {"text": "R: {{lastToolResult}}"},
    ]
    done, seconds = pi_cli("-p", "--tools", "bash", "go", script=script, cwd=str(tmp_path))
    escaped_pids.append(read_pid(pid_file))
    assert done.returncode == 0
    assert done.stderr == ""
    assert seconds < 8
    assert done.stdout.startswith("R: hi\n\n[The shell exited but a process that left its process group")


@needs_setsid
def test_cli_setsid_writer_with_timeout_is_killed_and_stderr_is_empty(tmp_path, escaped_pids):
    pid_file = tmp_path / "escaped.pid"
    command = f"setsid sh -c 'while :; do echo tick; sleep 0.1; done' & echo $! > {pid_file}; sleep 30"
    script = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": command, "timeout": 1}}]},
        {"text": "R: {{lastToolResult}}"},
    ]
    done, seconds = pi_cli("-p", "--tools", "bash", "go", script=script, cwd=str(tmp_path))
    pid = read_pid(pid_file)
    escaped_pids.append(pid)
    assert done.returncode == 0
    assert done.stderr == ""
    assert seconds < 8
    assert done.stdout.strip().endswith("Command timed out after 1 seconds")
    assert "tick" in done.stdout
    deadline = time.monotonic() + 3
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


async def test_timeout_still_applies_after_the_shell_closed_its_output(tool, tmp_path):
    started = time.monotonic()
    command = "echo early; exec >/dev/null 2>&1; sleep 30"
    message = await asyncio.wait_for(run_error(tool, {"command": command, "timeout": 0.5}, str(tmp_path)), 10)
    assert message == "early\n\nCommand timed out after 0.5 seconds"
    assert time.monotonic() - started < 3


async def test_cancelled_call_kills_the_command(tmp_path):
    pid_file = tmp_path / "child.pid"
    command = f"sleep 30 & echo $! > {pid_file}; wait"
    task = asyncio.ensure_future(
        LocalShell().exec(command, cwd=str(tmp_path), env=dict(os.environ), on_data=lambda _: None)
    )
    while not (pid_file.exists() and pid_file.read_text().strip()):
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    dead = await wait_dead(int(pid_file.read_text()))
    assert dead
