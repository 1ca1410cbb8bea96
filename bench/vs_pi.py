"""pi-host against pi 1.6.0 and the floor: every figure of the performance issue, from one command.

    .venv/bin/python bench/vs_pi.py [--runs 7] [--turns 1000] [--only CASE,...]

Cases, in this order (pi-host and pi 1.6.0 interleaved, median of ``--runs``; see
``bench/pi_compare.py`` for the server and the environments). Targets are issue 36's:

* ``version``   ``pi --version`` (<= 0.2x pi);
* ``openai``    ``pi --model bench-oa/oa-1 --no-session -p hi``: a 2,000-word answer streamed as
                chat completions from the loopback server (<= 0.35x pi, <= 35 MiB);
* ``anthropic`` the same through ``anthropic-messages``;
* ``floor``     the same two runs against the standard-library and asyncio floors
                (``bench/floor.py``: <= 4x and <= 1.6x, <= 35 MiB);
* ``resume``    ``pi --model bench-oa/oa-1 --session BIG -p hi`` on a copy (made before each run,
                not timed) of a 20,000-entry, 50 MiB session in pi 1.6.0's format with compactions
                (``bench/sessions_generate.py``), default settings (<= 0.3x pi, <= 80 MiB);
* ``resume200`` the same on 80,000 entries, 200 MiB (< 1.5 s, < 150 MiB);
* ``stream``    in-process, no pi: the openai-completions adapter against a bare httpx-sse loop
                over a 10,000-delta stream (``bench/providers_throughput.py``, <= 1.5x);
* ``batch``     ``pi batch`` overhead per task over one ``pi -p`` run (``bench/batch_throughput.py``,
                local executor, <= 100 ms);
* ``rpc-memory`` one ``--mode rpc`` process, ``--turns`` prompts with tool calls
                (``bench/rpc_memory.py``: RSS after the last <= after the first + 30 MiB);
* ``interactive-memory`` the same typed into one interactive ``pi`` in tmux
                (``bench/interactive_memory.py``: the same bound, key echo p99 unchanged);
* ``interactive-start`` start-up to an editable prompt in tmux (``bench/interactive_bench.py``,
                <= 0.35x pi).

pi 1.6.0 runs as its installed ``pi`` command does (``dist/bundle/cli.js``, from package.json
``bin``). Without pi 1.6.0 installed (``tests/support/pi_node.py``) only pi-host's figures are
printed. The last four cases run their scripts as child processes, one after the other.
Exit status 1 when a figure is over its target.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pi_compare import ANTHROPIC, OPENAI, BenchServer, Case, Comparison, answer_words, report  # noqa: E402
from sessions_generate import generate  # noqa: E402

ALL = (
    "version",
    "openai",
    "anthropic",
    "floor",
    "resume",
    "resume200",
    "stream",
    "batch",
    "rpc-memory",
    "interactive-memory",
    "interactive-start",
)
HERE = Path(__file__).resolve().parent
TAIL = "".join(answer_words()[-5:]).strip()


def model_args(model: tuple[str, str]) -> list[str]:
    return ["--model", f"{model[0]}/{model[1]}"]


def resume_case(
    source: str,
    target: float = 0.3,
    label: str = "20k entries, 50 MiB",
    wall_max: float | None = None,
    rss_max: float | None = 80,
) -> Case:
    return Case(
        f"--session BIG -p hi ({label})",
        lambda f: [*model_args(OPENAI), "--session", f, "-p", "hi"],
        target,
        prepare=lambda f: shutil.copyfile(source, f),
        check=lambda out: TAIL in out,
        rss_target=1.0,
        wall_max=wall_max,
        rss_max=rss_max,
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
            check = lambda out: TAIL in out  # noqa: E731
            cases.append(Case(label, lambda f, args=args: args, 0.35, check=check, rss_max=35))
    if "resume" in only:
        source = os.path.join(scratch, "big.jsonl")
        generate(source, 20_000, 50, work)
        cases.append(resume_case(source))
    if "resume200" in only:
        source = os.path.join(scratch, "big200.jsonl")
        generate(source, 80_000, 200, work)
        cases.append(resume_case(source, 0.5, "80k entries, 200 MiB", wall_max=1.5, rss_max=150))
    return cases


SCRIPTS = {
    "batch": lambda runs, turns: ["batch_throughput.py", "--no-ray", "--runs", "3"],
    "rpc-memory": lambda runs, turns: ["rpc_memory.py", "--turns", str(turns)],
    "interactive-memory": lambda runs, turns: ["interactive_memory.py", "--turns", str(turns)],
    "interactive-start": lambda runs, turns: ["interactive_bench.py", "--runs", str(min(runs, 5))],
}


def run_scripts(only: set[str], runs: int, turns: int) -> list[str]:
    """The cases that are scripts of their own: each runs to its end, its output shown as it comes."""
    failed = []
    for name, argv in SCRIPTS.items():
        if name not in only:
            continue
        script, *rest = argv(runs, turns)
        print(f"\n{name} (bench/{script} {' '.join(rest)}):", flush=True)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        done = subprocess.run([sys.executable, str(HERE / script), *rest], env=env, cwd=HERE.parent)
        if done.returncode != 0:
            failed.append(name)
    return failed


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
    parser.add_argument("--turns", type=int, default=1000, help="turns of the two memory cases")
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
    if "floor" in only:
        from floor import run as floor_run

        print("\nfloor (bench/floor.py):")
        failed += floor_run({"openai", "anthropic"}, args.runs)
    if "stream" in only:
        failed += stream_ratios(args.runs)
    failed += run_scripts(only, args.runs, args.turns)
    if failed:
        print("over target: " + "; ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
