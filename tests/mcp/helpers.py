from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PI = str(Path(sys.executable).with_name("pi"))
SERVERS = str(Path(__file__).with_name("servers.py"))
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
