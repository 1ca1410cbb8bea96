"""Cold start of `pi --version`, `pi --help` and `pi plugins` (median of N runs).

Baseline: a bare `python -c pass` with the same interpreter, measured in the same run, so the
figure that matters is what pi-host adds on top of starting Python. When pi 1.6.0 is installed
(`PI_REFERENCE_BIN=/path/to/pi`), its `--version` is measured too.

    .venv/bin/python bench/host_startup.py [runs]
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

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 15
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


if __name__ == "__main__":
    main()
