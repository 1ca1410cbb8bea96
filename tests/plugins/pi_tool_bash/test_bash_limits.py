"""bash: provider keys in the environment, the capped output log, processes that escape the group.

Each behaviour is checked on the tool and through the real ``pi`` command.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal as signals
import time

import pi_tool_bash
import pytest
from pi_tool_bash.output import OutputCollector
from pi_tool_bash.tool import log_cap

from pi_host.lib.toolkit import LocalShell
from tests.plugins.pi_tool_bash.test_bash import alive, wait_dead
from tests.support.tools import run, run_error, text_of

needs_setsid = pytest.mark.skipif(shutil.which("setsid") is None, reason="setsid not installed")


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
