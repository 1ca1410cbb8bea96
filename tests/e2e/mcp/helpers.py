from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.paths import SUPPORT

PI = str(Path(sys.executable).with_name("pi"))
SERVERS = str(SUPPORT / "mcp_servers.py")
TIME = {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
TEST_STDIO = {"command": sys.executable, "args": [SERVERS, "stdio"]}


def write_config(path: Path, servers: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}))


def run_pi(
    args: list[str], script: list | None = None, timeout: float = 60, **kw
) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if script is not None:
        env["PI_FAUX_SCRIPT"] = json.dumps(script)
    return subprocess.run(
        [PI, *args], capture_output=True, text=True, timeout=timeout, env=env, cwd=os.getcwd(), **kw
    )


def prompt(text: str, script: list, *extra: str) -> subprocess.CompletedProcess:
    return run_pi(["-p", text, "--model", "faux/faux-1", "--no-session", *extra], script)


def together(*runs: tuple) -> list[subprocess.CompletedProcess]:
    """Several ``run_pi(args, script[, env])`` at once (independent runs: less wall time), stdin
    closed; ``env`` adds to the environment of that run."""
    started = []
    for args, script, *more in runs:
        env = {**os.environ, **(more[0] if more else {})}
        if script is not None:
            env["PI_FAUX_SCRIPT"] = json.dumps(script)
        started.append(
            subprocess.Popen(
                [PI, *args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                cwd=os.getcwd(),
            )
        )
    done = []
    for process in started:
        out, err = process.communicate(timeout=60)
        done.append(subprocess.CompletedProcess(process.args, process.returncode, out, err))
    return done


def faux_prompt(text: str) -> list[str]:
    """The arguments of :func:`prompt` (for :func:`together`)."""
    return ["-p", text, "--model", "faux/faux-1", "--no-session"]
