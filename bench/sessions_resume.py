"""Resuming a large session: pi-host vs pi 1.6.0 on the same file, interleaved in one run.

    .venv/bin/python bench/sessions_resume.py [--entries 20000] [--mib 50] [--runs 7]

The case is the performance issue's: ``pi --model bench-oa/oa-1 --session BIG -p hi`` with
default settings, on a fresh copy (made before each run, not timed) of a session in pi 1.6.0's
format with compactions (``bench/sessions_generate.py``), both harnesses against the loopback
server of ``bench/pi_compare.py`` answering 2,000 words; median wall time and peak RSS of
``--runs`` runs. ``bench/vs_pi.py`` runs the same case among the others.

A second figure is what the session store alone costs in this process: opening the file and
building the context (median of ``--runs``).
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


def store_only(source: str, runs: int) -> list[float]:
    from pi_session_jsonl.store import JsonlStore

    times = []
    for _ in range(runs):
        started = time.perf_counter()
        store = JsonlStore.open_file(source)
        context = store.build_context()
        times.append(time.perf_counter() - started)
        assert len(context.messages) > 10, len(context.messages)
        store.close()
        del store, context
        gc.unfreeze()
        gc.collect()
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
            case = resume_case(source)
            failed = report(comparison.compare([case], args.runs), [case], args.runs)
            times = store_only(source, args.runs)
            print(f"  store open + context, in process: median {statistics.median(times) * 1000:.0f} ms")
        finally:
            comparison.close()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
