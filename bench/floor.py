"""`pi -p hi` against the floor: the least Python can do for the same answer (issue 36).

    .venv/bin/python bench/floor.py [--runs 9] [--only openai,anthropic]

For each API (openai-completions, anthropic-messages) four programs fetch the same 2,000-word
answer from the loopback server of ``bench/pi_compare.py``, interleaved run by run, median wall
time and peak RSS of ``--runs``:

* ``python -c pass``: the interpreter alone (for scale);
* ``floor stdlib``: ``bench/floor_client.py stdlib``, ``http.client`` + SSE split + ``json`` + print;
* ``floor asyncio``: the same over asyncio streams (asyncio's imports are part of its cost);
* ``pi-host``: ``pi --model … --no-session -p hi`` in the agent dir ``Comparison`` sets up.

Ratios are pi-host's median over each floor's, from the same run. Targets (issue 36): ≤ 4× the
stdlib floor, ≤ 1.6× the asyncio floor, peak RSS ≤ 35 MiB. Exit status 1 when one is missed.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from pi_compare import ANTHROPIC, OPENAI, BenchServer, Case, Comparison, Figures, Harness  # noqa: E402

TARGETS = {"floor stdlib": 4.0, "floor asyncio": 1.6}
RSS_TARGET = 35.0


def programs(comparison: Comparison, api: str, url: str) -> list[Harness]:
    """The four programs of one API; the floors get pi-host's environment (same HOME, no keys)."""
    ours = comparison.harnesses[0]
    model = OPENAI if api == "openai" else ANTHROPIC
    client = [sys.executable, str(HERE / "floor_client.py")]
    return [
        Harness("python -c pass", [sys.executable, "-c", "pass"], ours.env),
        Harness("floor stdlib", [*client, "stdlib", api, url], ours.env),
        Harness("floor asyncio", [*client, "asyncio", api, url], ours.env),
        Harness(
            "pi-host", [*ours.argv, "--model", f"{model[0]}/{model[1]}", "--no-session", "-p", "hi"], ours.env
        ),
    ]


def measure(comparison: Comparison, harnesses: list[Harness], runs: int, tail: str) -> dict[str, Figures]:
    case = Case("floor", lambda _f: [], 0.0)
    checked = Case("floor", lambda _f: [], 0.0, check=lambda out: tail in out)
    results = {h.name: Figures() for h in harnesses}
    for harness in harnesses:  # warm page and bytecode caches; not counted
        comparison.run_once(harness, checked if harness.name != "python -c pass" else case, -1)
    for index in range(runs):
        order = harnesses if index % 2 == 0 else list(reversed(harnesses))
        for harness in order:
            wall, peak = comparison.run_once(harness, case, index)
            results[harness.name].walls.append(wall)
            results[harness.name].peaks.append(peak)
    return results


def report(api: str, results: dict[str, Figures]) -> list[str]:
    failed = []
    print(f"{api}:")
    for name, fig in results.items():
        print(f"  {name:16s} {fig.wall * 1000:7.0f} ms  {fig.rss:6.1f} MiB")
    ours = results["pi-host"]
    for floor, target in TARGETS.items():
        ratio = ours.wall / results[floor].wall
        verdict = "ok" if ratio <= target else "OVER"
        print(f"  -> pi-host / {floor}: {ratio:.2f}x (target <= {target}x) {verdict}")
        if ratio > target:
            failed.append(f"{api} vs {floor}")
    verdict = "ok" if ours.rss <= RSS_TARGET else "OVER"
    print(f"  -> pi-host peak RSS {ours.rss:.1f} MiB (target <= {RSS_TARGET:.0f} MiB) {verdict}")
    if ours.rss > RSS_TARGET:
        failed.append(f"{api} RSS")
    return failed


def run(only: set[str], runs: int) -> list[str]:
    from pi_compare import answer_words

    tail = "".join(answer_words()[-5:]).strip()
    failed: list[str] = []
    with BenchServer() as server:
        comparison = Comparison(server.url)
        try:
            for api in ("openai", "anthropic"):
                if api in only:
                    results = measure(comparison, programs(comparison, api, server.url), runs, tail)
                    failed += report(api, results)
        finally:
            comparison.close()
    return failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--only", default="openai,anthropic")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs; median of {args.runs} interleaved runs")
    failed = run(set(args.only.split(",")), args.runs)
    if failed:
        print("over target: " + "; ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
