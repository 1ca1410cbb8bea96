"""pi-host against pi 1.6.0: every figure of the performance issue, from one command.

    .venv/bin/python bench/vs_pi.py [--runs 7] [--only version,openai,anthropic,resume,stream]

Cases (both harnesses, interleaved, median of ``--runs``; see ``bench/pi_compare.py`` for the
server and the environments):

* ``version``   ``pi --version``;
* ``openai``    ``pi --model bench-oa/oa-1 --no-session -p hi``: a 2,000-word answer streamed as
                chat completions from the loopback server;
* ``anthropic`` the same through ``anthropic-messages``;
* ``resume``    ``pi --model bench-oa/oa-1 --session BIG -p hi`` on a copy (made before each run,
                not timed) of a 20,000-entry, 50 MiB session in pi 1.6.0's format with compactions
                (``bench/sessions_generate.py``), default settings; wall time and peak RSS;
* ``stream``    in-process, no pi: the openai-completions adapter against a bare httpx-sse loop
                over a 10,000-delta stream (``bench/providers_throughput.py``).

pi 1.6.0 runs as its installed ``pi`` command does (``dist/bundle/cli.js``, from package.json
``bin``). Without pi 1.6.0 installed (``tests/support/pi_node.py``) only pi-host's figures are
printed.
Exit status 1 when a ratio is over its target.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pi_compare import ANTHROPIC, OPENAI, BenchServer, Case, Comparison, answer_words, report  # noqa: E402
from sessions_generate import generate  # noqa: E402

ALL = ("version", "openai", "anthropic", "resume", "stream")
TAIL = "".join(answer_words()[-5:]).strip()


def model_args(model: tuple[str, str]) -> list[str]:
    return ["--model", f"{model[0]}/{model[1]}"]


def resume_case(source: str, target: float = 0.5, label: str = "20k entries, 50 MiB") -> Case:
    return Case(
        f"--session BIG -p hi ({label})",
        lambda f: [*model_args(OPENAI), "--session", f, "-p", "hi"],
        target,
        prepare=lambda f: shutil.copyfile(source, f),
        check=lambda out: TAIL in out,
        rss_target=1.0,
    )


def harness_cases(only: set[str], scratch: str, work: str) -> list[Case]:
    cases = []
    if "version" in only:
        cases.append(Case("--version", lambda f: ["--version"], 0.2))
    for name, model, api in (
        ("openai", OPENAI, "openai-completions"),
        ("anthropic", ANTHROPIC, "anthropic-messages"),
    ):
        if name in only:
            args = [*model_args(model), "--no-session", "-p", "hi"]
            label = f"-p hi, {api}, 2,000 words"
            cases.append(Case(label, lambda f, args=args: args, 0.6, check=lambda out: TAIL in out))
    if "resume" in only:
        source = os.path.join(scratch, "big.jsonl")
        generate(source, 20_000, 50, work)
        cases.append(resume_case(source))
    return cases


def stream_ratios(runs: int) -> list[str]:
    from pi_provider_openai.completions import stream_completions
    from providers_common import measure
    from providers_throughput import MODEL, recorded_stream

    failed = []
    for label, share in (("text only", 0.0), ("90% text + 10% tool arguments", 0.1)):
        times = asyncio.run(
            measure(recorded_stream(10_000, share), "/v1/chat/completions", stream_completions, MODEL, runs)
        )
        ratio = statistics.median(times["adapter"]) / statistics.median(times["bare"])
        cpu = statistics.median(times["cpu:adapter"]) / statistics.median(times["cpu:bare"])
        verdict = "ok" if ratio <= 1.5 else "OVER"
        print(
            f"  adapter / bare httpx-sse, openai-completions, 10,000 deltas, {label}: "
            f"{ratio:.2f}x wall, {cpu:.2f}x CPU (target <= 1.5x) {verdict}"
        )
        if ratio > 1.5:
            failed.append(f"stream {label}")
    return failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--only", default=",".join(ALL))
    args = parser.parse_args()
    only = set(args.only.split(","))
    print(f"{os.cpu_count()} CPUs; median of {args.runs} interleaved runs")
    failed: list[str] = []
    with BenchServer() as server:
        comparison = Comparison(server.url)
        try:
            if not comparison.has_reference:
                print("pi 1.6.0 is not installed: pi-host's figures only (see tests/support/pi_node.py)")
            cases = harness_cases(only, comparison.scratch, comparison.work)
            if cases:
                failed += report(comparison.compare(cases, args.runs), cases, args.runs)
        finally:
            comparison.close()
    if "stream" in only:
        failed += stream_ratios(args.runs)
    if failed:
        print("over target: " + "; ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
