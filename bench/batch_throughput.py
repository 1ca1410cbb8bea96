"""Throughput of `pi batch`: tasks per minute at -j 1, 2 and 4, and what a task costs on top of a
single `pi -p` run, with the local executor and with Ray (when installed; a `ray start --head`
cluster shared by the runs, so Ray's own start-up, measured once, is not in the per-run figures).

Every task is one prompt answered at once by a loopback chat-completions server
(``tests/support/loopback.py``), so the figures are pi-host's and the executor's own cost:
process start, plugin loading, the session file, the event stream, the bookkeeping.

    .venv/bin/python bench/batch_throughput.py [--tasks 12] [--runs 3] [--no-ray]

Medians of ``--runs`` runs. Overhead per task = (wall of the batch at -j 1) / tasks − the median
wall of one `pi -p` run against the same server. Exit status 1 when the local executor's overhead
is over ``--target-ms`` (issue 36: 100 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.loopback import LoopbackServer, write_models_json  # noqa: E402

MODEL = "loop/loop-1"


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def timed(command: list[str], env: dict[str, str], cwd: str) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0,):
        raise SystemExit(f"{' '.join(command[:6])}... failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return elapsed


def batch_wall(root: str, env: dict[str, str], tasks: int, jobs: int, extra: list[str]) -> float:
    work = tempfile.mkdtemp(dir=root)
    path = os.path.join(work, "tasks.jsonl")
    with open(path, "w") as handle:
        for n in range(tasks):
            handle.write(json.dumps({"id": f"b{n}", "prompt": f"bench {n}", "model": MODEL}) + "\n")
    command = [sys.executable, "-m", "pi_host", "batch", path, "--out", os.path.join(work, "out")]
    command += ["-j", str(jobs), "--progress", "none", *extra]
    try:
        return timed(command, env, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--target-ms", type=float, default=100.0, help="issue 36: local -j 1 overhead")
    args = parser.parse_args()
    failed = False
    root = tempfile.mkdtemp(prefix="pb-")  # short: Ray's socket paths must fit in 107 bytes
    env = dict(os.environ)
    for name in ("home", "agent", "work"):
        os.makedirs(os.path.join(root, name))
    env.update(
        HOME=os.path.join(root, "home"),
        PI_CODING_AGENT_DIR=os.path.join(root, "agent"),
        PI_HOST_CACHE_DIR=os.path.join(root, "cache"),
        RAY_USAGE_STATS_ENABLED="0",
    )
    cwd = os.path.join(root, "work")
    ray_started = False
    try:
        with LoopbackServer() as server:  # the script is empty: every request gets "ok" at once
            write_models_json(env["PI_CODING_AGENT_DIR"], server.url)
            single_cmd = [sys.executable, "-m", "pi_host", "-p", "--model", MODEL, "--no-session", "hi"]
            timed(single_cmd, env, cwd)  # warm the caches
            single = statistics.median(timed(single_cmd, env, cwd) for _ in range(max(args.runs, 5)))
            print(f"one `pi -p` run: {single * 1000:.0f} ms (median)")
            print(f"{args.tasks} tasks a batch, median of {args.runs} runs, {os.cpu_count()} CPUs\n")
            executors: list[tuple[str, list[str]]] = [("local", [])]
            if not args.no_ray:
                try:
                    import ray  # noqa: F401
                except ImportError:
                    print("ray: not installed (pip install 'pi-host[ray]'), skipped\n")
                else:
                    ray_bin = str(Path(sys.executable).parent / "ray")
                    port = free_port()
                    started = time.perf_counter()
                    subprocess.run(
                        [ray_bin, "start", "--head", "--num-cpus", "4", "--include-dashboard=false",
                         "--temp-dir", os.path.join(root, "ray"), "--disable-usage-stats",
                         "--node-ip-address", "127.0.0.1", "--port", str(port)],
                        check=True, capture_output=True, env=env, cwd=cwd,
                    )  # fmt: skip
                    ray_started = True
                    print(f"ray start --head: {time.perf_counter() - started:.1f} s (once)\n")
                    executors.append(("ray", ["--executor", "ray", "--ray-address", f"127.0.0.1:{port}"]))
            print(
                f"{'executor':<9}{'-j':>3}{'wall s':>9}{'tasks/min':>11}{'per task ms':>13}{'overhead ms':>13}"
            )
            for name, extra in executors:
                batch_wall(root, env, 2, 1, extra)  # warm up (Ray: the first workers)
                for jobs in (1, 2, 4):
                    wall = statistics.median(
                        batch_wall(root, env, args.tasks, jobs, extra) for _ in range(args.runs)
                    )
                    per_task = wall / args.tasks
                    overhead = f"{(per_task - single) * 1000:13.0f}" if jobs == 1 else f"{'':13}"
                    if name == "local" and jobs == 1 and (per_task - single) * 1000 > args.target_ms:
                        failed = True
                    print(
                        f"{name:<9}{jobs:>3}{wall:>9.2f}{args.tasks / wall * 60:>11.1f}"
                        f"{per_task * 1000:>13.0f}{overhead}"
                    )
    finally:
        if ray_started:
            subprocess.run([str(Path(sys.executable).parent / "ray"), "stop", "--force"],
                           capture_output=True, env=env)  # fmt: skip
        shutil.rmtree(root, ignore_errors=True)
    verdict = "OVER" if failed else "ok"
    print(f"-> local -j 1 overhead per task (target <= {args.target_ms:g} ms) {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
