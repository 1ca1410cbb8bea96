"""bash: output, exit codes, timeouts and aborts killing the whole tree, streaming, truncation."""

from __future__ import annotations

import asyncio
import os
import re
import signal as signals
import stat
import time

import pi_tool_bash
import pytest

from pi_host.protocol.abort import AbortController
from tests.support.tools import run, run_error, text_of


@pytest.fixture
def tool():
    return pi_tool_bash.create_tool()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); check its state.
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


async def wait_dead(pid: int, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        await asyncio.sleep(0.05)
    return False


async def test_stdout_and_stderr_merged_in_order(tool, tmp_path):
    result = await run(tool, {"command": "echo one; echo two >&2; sleep 0.05; echo three"}, str(tmp_path))
    assert text_of(result) == "one\ntwo\nthree\n"
    assert not result.is_error
    assert result.details is None
    structured = result.structured_content
    assert structured["exit_code"] == 0 and structured["output"] == "one\ntwo\nthree\n"
    assert structured["truncated"] is False and "full_output_path" not in structured


async def test_runs_in_cwd(tool, tmp_path):
    result = await run(tool, {"command": "pwd"}, str(tmp_path))
    assert text_of(result).strip() == os.path.realpath(tmp_path)


async def test_nonzero_exit_is_returned_error_result(tool, tmp_path):
    result = await run(tool, {"command": "echo failing; exit 7"}, str(tmp_path))
    assert result.is_error
    assert text_of(result) == "failing\n\nCommand exited with code 7"
    assert result.structured_content["exit_code"] == 7


async def test_signal_killed_shell_reports_128_plus_signal(tool, tmp_path):
    result = await run(tool, {"command": "kill -TERM $$"}, str(tmp_path))
    assert result.is_error
    assert "code 143" in text_of(result)


async def test_no_output_marker(tool, tmp_path):
    result = await run(tool, {"command": "true"}, str(tmp_path))
    assert text_of(result) == "(no output)"
    assert result.structured_content["output"] == ""


async def test_timeout_kills_process_tree_including_sigterm_ignorer(tool, tmp_path):
    pid_file = tmp_path / "child.pid"
    command = f"(trap '' TERM; sleep 60) & echo $! > {pid_file}; echo started; sleep 60"
    started = time.monotonic()
    message = await run_error(tool, {"command": command, "timeout": 0.5}, str(tmp_path))
    assert time.monotonic() - started < 5
    assert "timed out after 0.5 seconds" in message
    assert message.startswith("started")
    assert await wait_dead(int(pid_file.read_text()))


async def test_abort_mid_command_kills_tree(tool, tmp_path):
    pid_file = tmp_path / "child.pid"
    controller = AbortController()
    command = f"sleep 60 & echo $! > {pid_file}; echo running; wait"
    task = asyncio.ensure_future(run(tool, {"command": command}, str(tmp_path), signal=controller.signal))
    for _ in range(100):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.02)
    controller.abort()
    with pytest.raises(Exception) as info:
        await asyncio.wait_for(task, 5)
    assert "aborted" in str(info.value)
    assert "running" in str(info.value)
    assert await wait_dead(int(pid_file.read_text()))


async def test_invalid_timeouts(tool, tmp_path):
    for value in (0, -1, 3_000_000, float("inf")):
        message = await run_error(tool, {"command": "true", "timeout": value}, str(tmp_path))
        assert "Invalid timeout" in message


async def test_missing_cwd(tool, tmp_path):
    message = await run_error(tool, {"command": "true"}, str(tmp_path / "gone"))
    assert "does not exist" in message


async def test_long_output_keeps_tail_and_full_file(tool, tmp_path):
    result = await run(tool, {"command": "seq 1 5000"}, str(tmp_path))
    text = text_of(result)
    body, notice = text.split("\n\n[")
    assert body.splitlines()[0] == "3001" and body.splitlines()[-1] == "5000"
    path = re.search(r"(/\S+/pi-bash-[0-9a-f]{16}\.log)", notice).group(1)
    assert "3001-5000 of 5000" in notice
    assert open(path).read() == "".join(f"{i}\n" for i in range(1, 5001))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert result.details["fullOutputPath"] == path
    assert result.details["truncation"]["truncatedBy"] == "lines"
    assert result.structured_content["full_output_path"] == path
    os.unlink(path)


async def test_byte_truncation_names_50kb(tool, tmp_path):
    result = await run(
        tool, {"command": "for i in $(seq 1 1000); do printf '%099d\\n' $i; done"}, str(tmp_path)
    )
    body, notice = text_of(result).split("\n\n[")
    assert "50.0KB" in notice
    assert len(body.encode()) <= 51200
    assert body.splitlines()[-1].endswith("1000")
    os.unlink(result.details["fullOutputPath"])


async def test_partial_last_line(tool, tmp_path):
    result = await run(tool, {"command": "head -c 200000 /dev/zero | tr '\\0' x"}, str(tmp_path))
    body, notice = text_of(result).split("\n\n[")
    assert body == "x" * 51200
    assert "line 1" in notice and "195.3KB" in notice
    assert result.details["truncation"]["lastLinePartial"] is True
    os.unlink(result.details["fullOutputPath"])


async def test_huge_output_bounded_and_complete_on_disk(tool, tmp_path):
    # ~20 MB of output: the text stays within the limits, the file has every byte.
    result = await run(tool, {"command": "seq 1 2500000"}, str(tmp_path))
    body = text_of(result).split("\n\n[")[0]
    assert body.splitlines()[-1] == "2500000"
    path = result.details["fullOutputPath"]
    assert os.path.getsize(path) == sum(len(f"{i}\n") for i in range(1, 2500001))
    output = result.structured_content["output"]
    assert len(output.encode()) < 1024 * 1024 + 200
    assert output.startswith("1\n2\n") and output.endswith("2500000\n") and "omitted" in output
    os.unlink(path)


async def test_live_updates_first_empty_then_tail(tool, tmp_path):
    updates = []

    async def on_update(partial):
        updates.append(text_of(partial))

    command = "for i in 1 2 3 4 5; do echo tick$i; sleep 0.15; done"
    await run(tool, {"command": command}, str(tmp_path), on_update=on_update)
    assert updates[0] == ""
    assert len(updates) >= 3
    assert any("tick1" in u for u in updates[1:])
    assert all(len(a) <= len(b) for a, b in zip(updates, updates[1:], strict=False))


async def test_session_environment(tool, tmp_path, monkeypatch):
    monkeypatch.setenv("PI_MODEL", "inherited")
    monkeypatch.setenv("PI_SESSION_FILE", "/inherited")
    command = 'echo "$PI_SESSION_ID|$PI_PROVIDER|$PI_MODEL|$PI_REASONING_LEVEL|${PI_SESSION_FILE-unset}"; echo "$PATH"'
    result = await run(
        tool, {"command": command}, str(tmp_path),
        session_id="s1", provider="faux", model="faux-1", thinking_level="high", agent_dir=str(tmp_path / "agent"),
    )  # fmt: skip
    first, path = text_of(result).splitlines()
    assert first == "s1|faux|faux-1|high|unset"
    assert path.startswith(str(tmp_path / "agent" / "bin") + os.pathsep)


async def test_agent_bin_on_path_is_used(tool, tmp_path):
    bin_dir = tmp_path / "agent" / "bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "pi-helper-cmd"
    script.write_text("#!/bin/sh\necho from agent bin\n")
    script.chmod(0o755)
    result = await run(tool, {"command": "pi-helper-cmd"}, str(tmp_path), agent_dir=str(tmp_path / "agent"))
    assert text_of(result) == "from agent bin\n"


async def test_shell_path_and_command_prefix_settings(tool, tmp_path):
    settings = {"shellPath": "/bin/sh", "shellCommandPrefix": "PREFIXED=yes"}
    result = await run(
        tool, {"command": 'echo "$PREFIXED"; readlink /proc/$$/exe'}, str(tmp_path), settings=settings
    )
    lines = text_of(result).splitlines()
    assert lines[0] == "yes"
    assert lines[1] == os.path.realpath("/bin/sh")


async def test_background_process_holding_pipe_reported_on_timeout(tool, tmp_path):
    message = await run_error(tool, {"command": "(sleep 30) & echo bye", "timeout": 1}, str(tmp_path))
    assert "timed out after 1 seconds" in message
    assert "exited with code 0" in message


def test_sigkill_constant_used():
    # The kill used on abort/timeout cannot be caught or ignored by the command.
    assert signals.SIGKILL == 9


async def test_redirected_background_process_does_not_hold_the_call(tool, tmp_path):
    started = time.monotonic()
    result = await run(tool, {"command": "sleep 2 > /dev/null 2>&1 & echo quick"}, str(tmp_path))
    assert text_of(result) == "quick\n"
    assert time.monotonic() - started < 1.5
