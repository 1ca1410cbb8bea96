"""Cold start of `pi --version`, `pi --help` and `pi plugins` (median of N runs).

Baseline: a bare `python -c pass` with the same interpreter, measured in the same run, so the
figure that matters is what pi-host adds on top of starting Python. When pi 1.6.0 is installed
(`PI_REFERENCE_BIN=/path/to/pi`), its `--version` is measured too.

    .venv/bin/python bench/host_startup.py [runs] [--instructions]

Wall-clock medians swing with whatever else the machine runs; ``--instructions`` also counts the
instructions of one run of each command under valgrind's callgrind (deterministic: the figure to
compare two versions with, e.g. ``PYTHONPATH=<other checkout>:<other checkout>/plugins``).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
RUNS = int(ARGS[0]) if ARGS else 15
INSTRUCTIONS = "--instructions" in sys.argv
BIN = Path(sys.executable).parent


def median_ms(command: list[str], env: dict[str, str]) -> float:
    subprocess.run(command, capture_output=True, env=env)  # warm the page cache
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run(command, capture_output=True, env=env, check=False)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PI_CODING_AGENT_DIR=tmp, PI_HOST_CACHE_DIR=os.path.join(tmp, "cache"))
        # As installed packages run: with the bytecode cache (the first, warm-up run writes it).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        baseline = median_ms([sys.executable, "-c", "pass"], env)
        rows = [("python -c pass (baseline)", baseline)]
        for label, args in (
            ("pi --version", ["--version"]),
            ("pi --help", ["--help"]),
            ("pi plugins", ["plugins"]),
        ):
            rows.append((label, median_ms([str(BIN / "pi"), *args], env)))
        reference = os.environ.get("PI_REFERENCE_BIN") or shutil.which("pi-reference")
        if reference:
            rows.append(("pi 1.6.0 --version (reference)", median_ms([reference, "--version"], env)))
    print(f"cold start, median of {RUNS} runs")
    for label, value in rows:
        print(f"  {label:34s} {value:7.1f} ms   {value / baseline:5.2f}x baseline")
    version = rows[1][1]
    print(f"  target: pi --version under 80 ms -> {'OK' if version < 80 else 'MISSED'}")
    if INSTRUCTIONS:
        print_instructions(env)


def instructions(command: list[str], env: dict[str, str]) -> int:
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
        capture_output=True,
        text=True,
        env=env,
    )
    line = next(line for line in out.stderr.splitlines() if "Collected" in line)
    return int(line.split()[-1])


def print_instructions(env: dict[str, str]) -> None:
    if shutil.which("valgrind") is None:
        print("  (valgrind not installed: no instruction counts)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(env, PI_CODING_AGENT_DIR=tmp, PI_HOST_CACHE_DIR=os.path.join(tmp, "cache"))
        base = instructions([sys.executable, "-c", "pass"], env)
        print("instructions of one run (callgrind)")
        print(f"  {'python -c pass (baseline)':34s} {base / 1e6:7.1f} M")
        for label, args in (
            ("pi --version", ["--version"]),
            ("pi --help", ["--help"]),
            ("pi plugins", ["plugins"]),
        ):
            subprocess.run([str(BIN / "pi"), *args], capture_output=True, env=env)  # bytecode cache
            count = instructions([sys.executable, str(BIN / "pi"), *args], env)
            print(f"  {label:34s} {count / 1e6:7.1f} M   {count / base:5.2f}x baseline")


if __name__ == "__main__":
    main()
