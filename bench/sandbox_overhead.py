"""Time the sandbox adds to one ``bash`` tool call, per mode (target: ≤ 15 ms median).

The bash tool runs ``true`` in a throw-away project through the same launcher the ``pi-sandbox``
plugin installs, in this process (so the figures are the sandbox's, not pi's start-up):

* ``off``                          no launcher (pi-host's ordinary path)
* ``read-only``                    Landlock, mount + PID + network namespaces
* ``workspace-write``              the same, writable roots, protected paths bound read-only
* ``workspace-write, TCP ports``   no network namespace; Landlock TCP rules instead
* ``workspace-write, no namespaces``  Landlock alone (a subreaper stops what is left)
* ``bwrap``                        bubblewrap instead of Landlock (when installed)

Rounds interleave the modes so machine load hits them alike; medians over ``--calls`` per mode.
A second table runs the real ``pi --mode json`` (faux model, ``--calls`` bash calls of ``true``
per run, one run per mode, repeated ``--pi-runs`` times) and reads each call's ``durationMs``:
the time a user sees, pi's own tool path included.

    .venv/bin/python bench/sandbox_overhead.py [--calls 60] [--pi-runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "plugins"))

from pi_sandbox.launch import Capabilities  # noqa: E402
from pi_sandbox.policy import build_policy  # noqa: E402
from pi_sandbox.probe import capabilities  # noqa: E402
from pi_sandbox.session import SessionSandbox  # noqa: E402

from pi_host.loop.tools import ToolContext  # noqa: E402
from pi_host.protocol.abort import AbortController  # noqa: E402


def variants(project: str, agent: str, home: str) -> dict[str, object]:
    caps = capabilities()
    found: dict[str, object] = {"off": None}
    if not caps.landlock_abi:
        print("Landlock is not available on this kernel: only bwrap is measured")
    plain = Capabilities(caps.landlock_abi, False, caps.bwrap)
    table = [
        ("read-only", "read-only", "off", caps, "landlock"),
        ("workspace-write", "workspace-write", "off", caps, "landlock"),
        ("workspace-write, TCP ports", "workspace-write", [443], caps, "landlock"),
        ("workspace-write, no namespaces", "workspace-write", "on", plain, "landlock"),
    ]
    for name, mode, network, these, backend in table:
        if caps.landlock_abi:
            policy = build_policy(mode, {"network": network}, None, project, agent, home)
            found[name] = SessionSandbox(policy, backend).launcher(these)
    if caps.bwrap:
        policy = build_policy("workspace-write", {"network": "off"}, None, project, agent, home)
        found["bwrap (workspace-write)"] = SessionSandbox(policy, "bwrap").launcher(caps)
    return found


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--pi-runs", type=int, default=3)
    args = parser.parse_args()
    import pi_tool_bash

    with tempfile.TemporaryDirectory() as root:
        project, agent = os.path.join(root, "project"), os.path.join(root, "agent")
        os.makedirs(project)
        os.makedirs(agent)
        found = variants(project, agent, root)
        tools = {}
        for name, launcher in found.items():
            tool = pi_tool_bash.create_tool()
            tool.shell.launcher = launcher
            tools[name] = tool
        ctx = ToolContext(cwd=project, agent_dir=agent)
        times: dict[str, list[float]] = {name: [] for name in tools}
        for _ in range(3):  # warm up every path
            for tool in tools.values():
                await tool.execute("w", {"command": "true"}, AbortController().signal, None, ctx)
        for _ in range(args.calls):
            for name, tool in tools.items():
                started = time.perf_counter()
                result = await tool.execute("b", {"command": "true"}, AbortController().signal, None, ctx)
                times[name].append((time.perf_counter() - started) * 1000)
                assert not result.is_error, (name, result.content)
    caps = capabilities()
    print(
        f"python {platform.python_version()}, kernel {platform.release()}, {os.cpu_count()} cpus, "
        f"Landlock ABI {caps.landlock_abi}, namespaces {caps.namespaces}, bwrap {caps.bwrap or 'no'}"
    )
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"bash tool running `true`, {args.calls} calls per mode; load average {load}\n")
    base = statistics.median(times["off"])
    print(f"{'mode':34s} {'median':>9s} {'added':>9s} {'mean':>9s} {'p90':>9s} {'max':>9s}")
    for name, values in times.items():
        median = statistics.median(values)
        p90 = sorted(values)[int(len(values) * 0.9) - 1]
        print(
            f"{name:34s} {median:6.1f} ms {median - base:+6.1f} ms {statistics.mean(values):6.1f} ms "
            f"{p90:6.1f} ms {max(values):6.1f} ms"
        )


def pi_runs(calls: int, runs: int) -> None:
    import json
    import subprocess

    script = [{"toolCalls": [{"name": "bash", "arguments": {"command": "true"}}]}] * calls + [
        {"text": "done"}
    ]
    modes = ["off", "read-only", "workspace-write"]
    found: dict[str, list[float]] = {mode: [] for mode in modes}
    with tempfile.TemporaryDirectory() as root:
        env = dict(
            os.environ, PI_FAUX_SCRIPT=json.dumps(script), PI_CODING_AGENT_DIR=os.path.join(root, "agent")
        )
        for _ in range(runs):
            for mode in modes:
                argv = [
                    sys.executable,
                    "-m",
                    "pi_host",
                    "--mode",
                    "json",
                    "--no-session",
                    "--model",
                    "faux/faux-1",
                ]
                out = subprocess.run(
                    [*argv, "--sandbox", mode, "go"], cwd=root, env=env, capture_output=True, text=True
                )
                for line in out.stdout.splitlines():
                    if '"tool_execution_end"' in line:
                        found[mode].append(json.loads(line).get("durationMs") or 0)
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(
        f"\nreal pi --mode json, {calls} bash calls per run x {runs} runs; durationMs; load average {load}\n"
    )
    base = statistics.median(found["off"])
    for mode, values in found.items():
        median = statistics.median(values)
        print(f"{mode:34s} {median:6.1f} ms {median - base:+6.1f} ms")


if __name__ == "__main__":
    asyncio.run(main())
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--pi-runs", type=int, default=3)
    known, _ = parser.parse_known_args()
    if known.pi_runs:
        pi_runs(known.calls, known.pi_runs)
