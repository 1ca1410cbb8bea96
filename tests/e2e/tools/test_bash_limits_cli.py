"""bash: provider keys in the environment, the capped output log, processes that escape the group.

Each behaviour is checked on the tool and through the real ``pi`` command.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal as signals
import time

import pi_tool_bash
import pytest

from tests.plugins.pi_tool_bash.test_bash import alive
from tests.support.tools import pi_cli

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
