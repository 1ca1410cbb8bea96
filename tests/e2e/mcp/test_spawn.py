"""A stdio server starts while the MCP SDK imports, and pi-host's stdio transport then uses that
process: one process per server, none left behind when the run ends first (issue 18, start-up)."""

from __future__ import annotations

import os
import sys
import time

from tests.e2e.mcp.helpers import LIGHT, prompt, write_config

WRAPPER = """import os, sys
with open({log!r}, "a") as handle:
    handle.write(f"{{os.getpid()}}\\n")
os.execv(sys.executable, [sys.executable, {servers!r}])
"""


def _wrapped(tmp_path) -> tuple[dict, str]:
    log = str(tmp_path / "spawns.log")
    script = tmp_path / "wrapper.py"
    script.write_text(WRAPPER.format(log=log, servers=LIGHT))
    return {"command": sys.executable, "args": [str(script)]}, log


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as handle:  # a zombie is not alive
        return handle.read().split()[2] != "Z"


def test_a_direct_server_is_spawned_once_and_answers(isolated_environment, tmp_path):
    entry, log = _wrapped(tmp_path)
    write_config(isolated_environment["agent"] / "mcp.json", {"docs": {**entry, "exposure": "direct"}})
    script = [
        {"toolCalls": [{"name": "mcp__docs__echo", "arguments": {"text": "abc"}}]},
        {"text": "got: {{lastToolResult}}"},
    ]
    done = prompt("echo", script)
    assert done.returncode == 0, done.stderr
    assert "got: cba" in done.stdout
    pids = [int(line) for line in open(log).read().split()]
    assert len(pids) == 1, pids  # the early process is the one used, no second spawn
    deadline = time.monotonic() + 5
    while _alive(pids[0]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pids[0])


def test_a_run_that_ends_before_the_server_connects_leaves_no_process(isolated_environment, tmp_path):
    entry, log = _wrapped(tmp_path)
    write_config(isolated_environment["agent"] / "mcp.json", {"docs": entry})  # deferred: not waited for
    done = prompt("hi", [{"text": "quick"}])
    assert done.returncode == 0, done.stderr
    assert "quick" in done.stdout
    started = time.monotonic()
    pids: list[int] = []
    while time.monotonic() < started + 5:
        pids = [int(line) for line in open(log).read().split()] if os.path.exists(log) else []
        if pids and not any(_alive(pid) for pid in pids):
            break
        if not pids and time.monotonic() > started + 1:  # killed before it wrote its pid
            break
        time.sleep(0.05)
    assert len(pids) <= 1 and not any(_alive(pid) for pid in pids), pids
