"""The MCP tests' setup and runs: ``pi`` is the installed console script (as a user types it),
through ``tests.support.pi``."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import partial
from pathlib import Path

from tests.support.paths import SUPPORT
from tests.support.pi import PI_SCRIPT, run_pi, start_pi

SERVERS = str(SUPPORT / "mcp_servers.py")
"""The test server built with the SDK (stdio or streamable HTTP): its import costs ~1.2 s CPU."""
LIGHT = str(SUPPORT / "mcp_light.py")
"""The same server without the SDK (stdio, the same JSON): for tests about pi-host, not the SDK."""
TIME = {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
TEST_STDIO = {"command": sys.executable, "args": [LIGHT]}
SDK_STDIO = {"command": sys.executable, "args": [SERVERS, "stdio"]}

pi = partial(run_pi, command=PI_SCRIPT)
"""``run_pi`` with the ``pi`` console script."""


def write_config(path: Path, servers: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}))


def prompt(text: str, script: list, *extra: str) -> subprocess.CompletedProcess:
    """``pi -p <text>`` on the scripted faux model, without a session file."""
    return pi(*faux_prompt(text), *extra, script=script)


def together(*runs: tuple) -> list[subprocess.CompletedProcess]:
    """Several ``pi(*args, script=script[, env=env])`` at once (independent runs: less wall
    time), stdin closed; ``env`` adds to the environment of that run."""
    started = [
        start_pi(
            *args,
            script=script,
            env=more[0] if more else None,
            command=PI_SCRIPT,
            stdin=subprocess.DEVNULL,
        )
        for args, script, *more in runs
    ]
    done = []
    for process in started:
        out, err = process.communicate(timeout=60)
        done.append(subprocess.CompletedProcess(process.args, process.returncode, out, err))
    return done


def faux_prompt(text: str) -> list[str]:
    """The arguments of :func:`prompt` (for :func:`together`)."""
    return ["-p", text, "--model", "faux/faux-1", "--no-session"]
