"""Resuming a large session: pi-host vs pi 1.6.0 on the same file, interleaved in one run.

    .venv/bin/python bench/sessions_resume.py [--entries 20000] [--mib 50] [--runs 7]

The case is the performance issue's: ``pi --model bench-oa/oa-1 --session BIG -p hi`` with
default settings, on a fresh copy (made before each run, not timed) of a session in pi 1.6.0's
format with compactions (``bench/sessions_generate.py``), both harnesses against the loopback
server of ``bench/pi_compare.py`` answering 2,000 words; median wall time and peak RSS of
``--runs`` runs. ``bench/vs_pi.py`` runs the same case among the others.

A second figure is what the session store alone costs: opening the file and building the
context (median of ``--runs``), in this process (split into reading the file, checking the entries
and building the tree, and projecting the context) and in a fresh process per run (after opening a
small session there, so imports and the message validator are warm but the allocator is not: the
50 MiB a resume reads are new memory, as in a real run).
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pi_compare import BenchServer, Comparison, report  # noqa: E402
from sessions_generate import generate  # noqa: E402
from vs_pi import resume_case  # noqa: E402


def store_only(source: str, runs: int) -> dict[str, list[float]]:
    from pi_session_jsonl import reading
    from pi_session_jsonl.store import JsonlStore

    times: dict[str, list[float]] = {"total": [], "read": [], "check + tree": [], "context": []}
    real_read = reading.read_session  # the store imports it when it opens a file
    read_took: list[float] = []

    def timed_read(*args, **kwargs):
        started = time.perf_counter()
        try:
            return real_read(*args, **kwargs)
        finally:
            read_took.append(time.perf_counter() - started)

    reading.read_session = timed_read
    try:
        for _ in range(runs):
            started = time.perf_counter()
            store = JsonlStore.open_file(source)
            opened = time.perf_counter()
            context = store.build_context()
            done = time.perf_counter()
            times["total"].append(done - started)
            times["read"].append(read_took[-1])
            times["check + tree"].append(opened - started - read_took[-1])
            times["context"].append(done - opened)
            assert len(context.messages) > 10, len(context.messages)
            store.close()
            del store, context
            gc.unfreeze()
            gc.collect()
    finally:
        reading.read_session = real_read
    return times


COLD = """
import os, sys, tempfile, time
from pi_session_jsonl.store import JsonlStore
source = sys.argv[1]
small = os.path.join(tempfile.mkdtemp(), "small.jsonl")
with open(source, "rb") as big, open(small, "wb") as out:
    out.writelines(big.readline() for _ in range(50))
store = JsonlStore.open_file(small); store.build_context(); store.close()
started = time.perf_counter()
store = JsonlStore.open_file(source); store.build_context()
print(time.perf_counter() - started)
"""


def store_cold(source: str, runs: int) -> list[float]:
    import subprocess

    times = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", COLD, source], capture_output=True, text=True, check=True)
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=20000)
    parser.add_argument("--mib", type=float, default=50)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with BenchServer() as server:
        comparison = Comparison(server.url)
        try:
            source = os.path.join(comparison.scratch, "big.jsonl")
            generate(source, args.entries, args.mib, comparison.work)
            size = os.path.getsize(source) / 2**20
            print(f"session: {args.entries} entries, {size:.1f} MiB, pi 1.6.0 format with compactions")
            print(f"{os.cpu_count()} CPUs; median of {args.runs} interleaved runs")
            case = resume_case(source, label=f"{args.entries // 1000}k entries, {args.mib:g} MiB")
            failed = report(comparison.compare([case], args.runs), [case], args.runs)
            times = store_only(source, args.runs)
            parts = ", ".join(
                f"{k} {statistics.median(v) * 1000:.0f}" for k, v in times.items() if k != "total"
            )
            median = statistics.median(times["total"]) * 1000
            print(f"  store open + context, in process: median {median:.0f} ms ({parts})")
            cold = statistics.median(store_cold(source, args.runs)) * 1000
            print(f"  store open + context, fresh process each: median {cold:.0f} ms")
        finally:
            comparison.close()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
