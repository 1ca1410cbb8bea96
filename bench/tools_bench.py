"""Benchmarks for the built-in tools. Prints figures; not a test.

    .venv/bin/python bench/tools_bench.py [--runs 3] [--files 50000] [--mb 100]

1. ``read`` of a 100 MB file with ``offset`` near the end: time and **peak RSS** of a child
   process doing only that, against a baseline child that imports the same modules and a naive
   child that loads the file whole.
2. ``grep`` over a 50,000-file tree (pattern found in a handful of files, so every file is
   scanned) against running ``rg`` directly; ``find`` over the same tree against ``os.walk``.
3. ``bash`` streaming 100 MB of output: time and peak RSS against a baseline child that runs the
   same command with output discarded.

Every figure is the median of ``--runs`` runs; each run is a fresh child process, so peak RSS is
that run's own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


# ---------------------------------------------------------------------------------------------
# Child side: one measurement, reported as JSON on stdout.
# ---------------------------------------------------------------------------------------------


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


async def _child(kind: str, arg: str, extra: str) -> dict:
    import pi_tool_bash
    import pi_tool_bash.tool
    import pi_tool_find
    import pi_tool_find.tool
    import pi_tool_grep
    import pi_tool_grep.tool
    import pi_tool_read
    import pi_tool_read.tool  # noqa: F401  (every child loads the same code before timing)

    from pi_host.loop.tools import ToolContext
    from pi_host.protocol.abort import AbortController

    signal = AbortController().signal
    started = time.perf_counter()
    info: dict = {}
    if kind == "baseline":
        pass
    elif kind == "naive-read":
        with open(arg, "rb") as handle:
            data = handle.read()
        info["lines"] = data.count(b"\n")
    elif kind == "read":
        tool = pi_tool_read.create_tool()
        result = await tool.execute(
            "b", {"path": arg, "offset": int(extra)}, signal, None, ToolContext(cwd="/")
        )
        info["chars"] = len(result.content[0].text)
    elif kind == "grep":
        tool = pi_tool_grep.create_tool()
        result = await tool.execute("b", {"pattern": extra}, signal, None, ToolContext(cwd=arg))
        info["lines"] = len(result.content[0].text.splitlines())
    elif kind == "find":
        tool = pi_tool_find.create_tool()
        result = await tool.execute(
            "b", {"pattern": extra, "limit": 100000}, signal, None, ToolContext(cwd=arg)
        )
        info["lines"] = len(result.content[0].text.splitlines())
    elif kind == "walk":
        count = 0
        for _root, _dirs, files in os.walk(arg):
            count += sum(1 for f in files if f.endswith(extra))
        info["lines"] = count
    elif kind == "bash":
        tool = pi_tool_bash.create_tool()
        updates = [0]

        def on_update(_partial):
            updates[0] += 1

        # the whole output logged (no shellOutputLogMaxBytes cap), as the figure has always measured
        context = ToolContext(cwd="/tmp", settings={"shellOutputLogMaxBytes": 0})
        result = await tool.execute("b", {"command": arg}, signal, on_update, context)
        info["updates"] = updates[0]
        info["chars"] = len(result.content[0].text)
        if result.details and result.details.get("fullOutputPath"):
            path = result.details["fullOutputPath"]
            info["full_output_bytes"] = os.path.getsize(path)
            os.unlink(path)
    elif kind == "bash-baseline":
        subprocess.run(["/bin/bash", "-c", arg], stdout=subprocess.DEVNULL, check=True)
    info["seconds"] = time.perf_counter() - started
    info["peak_rss_mb"] = _peak_rss_mb()
    return info


def child_main(argv: list[str]) -> None:
    kind, arg, extra = (argv + ["", "", ""])[:3]
    print(json.dumps(asyncio.run(_child(kind, arg, extra))))


# ---------------------------------------------------------------------------------------------
# Parent side
# ---------------------------------------------------------------------------------------------


def measure(kind: str, arg: str = "", extra: str = "", runs: int = 3) -> dict:
    samples = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, __file__, "--child", kind, arg, extra],
            capture_output=True,
            text=True,
            check=True,
        )
        samples.append(json.loads(out.stdout.strip().splitlines()[-1]))
    merged = dict(samples[-1])
    merged["seconds"] = statistics.median(s["seconds"] for s in samples)
    merged["peak_rss_mb"] = statistics.median(s["peak_rss_mb"] for s in samples)
    return merged


def make_big_file(path: str, megabytes: int) -> int:
    line = b"%09d the quick brown fox jumps over the lazy dog 0123456789\n"
    target = megabytes * 1024 * 1024
    written = 0
    number = 0
    with open(path, "wb") as handle:
        while written < target:
            block = b"".join(line % (number + i) for i in range(10000))
            handle.write(block)
            written += len(block)
            number += 10000
    return number


def make_tree(root: str, files: int) -> None:
    per_dir = 100
    with open(os.path.join(root, ".gitignore"), "w") as handle:
        handle.write("ignored/\n*.tmp\n")
    for index in range(files):
        directory = os.path.join(
            root, f"pkg{index // (per_dir * 50):03d}", f"mod{(index // per_dir) % 50:02d}"
        )
        if index % per_dir == 0:
            os.makedirs(directory, exist_ok=True)
        body = f"def function_{index}():\n    return {index}\n"
        if index % 10000 == 7:
            body += "# NEEDLE_MARKER here\n"
        with open(os.path.join(directory, f"file_{index}.py"), "w") as handle:
            handle.write(body)


def report(title: str, rows: list[tuple[str, dict]]) -> None:
    print(f"\n== {title}")
    for name, data in rows:
        extra = {k: v for k, v in data.items() if k not in ("seconds", "peak_rss_mb")}
        print(
            f"  {name:<28} {data['seconds'] * 1000:9.1f} ms   peak RSS {data['peak_rss_mb']:7.1f} MB   {extra}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--mb", type=int, default=100)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, median of {args.runs} runs")
    with tempfile.TemporaryDirectory(prefix="pi-tools-bench-") as tmp:
        big = os.path.join(tmp, "big.log")
        lines = make_big_file(big, args.mb)
        size_mb = os.path.getsize(big) / 1024 / 1024
        baseline = measure("baseline", runs=args.runs)
        read = measure("read", big, str(lines - 50), runs=args.runs)
        naive = measure("naive-read", big, runs=args.runs)
        report(
            f"read: {size_mb:.0f} MB file, {lines:,} lines, offset {lines - 50:,}",
            [("baseline (imports only)", baseline), ("read tool", read), ("naive f.read() of file", naive)],
        )
        print(f"  read peak RSS above baseline: {read['peak_rss_mb'] - baseline['peak_rss_mb']:.1f} MB "
              f"(file is {size_mb:.0f} MB; naive load adds {naive['peak_rss_mb'] - baseline['peak_rss_mb']:.1f} MB)")  # fmt: skip
        os.unlink(big)

        tree = os.path.join(tmp, "tree")
        os.makedirs(tree)
        started = time.perf_counter()
        make_tree(tree, args.files)
        print(f"\n(created {args.files:,} files in {time.perf_counter() - started:.1f} s)")
        from pi_host.lib.toolkit import find_ripgrep

        rg = find_ripgrep()
        # The same arguments the tool passes; one untimed run first so the page cache is warm.
        rg_args = [rg, "--no-config", "--json", "--line-number", "--color=never", "--hidden",
                   "--glob", "!.git", "--no-require-git", "--", "NEEDLE_MARKER", "."]  # fmt: skip
        subprocess.run(rg_args, cwd=tree, stdout=subprocess.DEVNULL, check=False)
        raw = []
        for _ in range(args.runs):
            started = time.perf_counter()
            subprocess.run(rg_args, cwd=tree, stdout=subprocess.DEVNULL, check=False)
            raw.append(time.perf_counter() - started)
        grep = measure("grep", tree, "NEEDLE_MARKER", runs=args.runs)
        find = measure("find", tree, "*.py", runs=args.runs)
        walk = measure("walk", tree, ".py", runs=args.runs)
        rg_row = {"seconds": statistics.median(raw), "peak_rss_mb": 0.0}
        report(
            f"grep/find over {args.files:,} files",
            [
                ("rg directly (same args)", rg_row),
                ("grep tool", grep),
                ("find tool (*.py)", find),
                ("os.walk baseline", walk),
            ],
        )
        print(f"  grep tool / raw rg: {grep['seconds'] / rg_row['seconds']:.2f}x (both include starting rg; "
              "the tool also parses its JSON and formats lines)")  # fmt: skip
        print(f"  find tool / os.walk: {find['seconds'] / walk['seconds']:.2f}x")

    command = f"head -c {args.mb * 1024 * 1024} /dev/zero | tr '\\0' 'x' | fold -w 99"
    bash = measure("bash", command, runs=args.runs)
    bash_base = measure("bash-baseline", command, runs=args.runs)
    report(
        f"bash streaming {args.mb} MB of output",
        [("baseline (output discarded)", bash_base), ("bash tool", bash)],
    )
    print(f"  bash tool peak RSS above baseline child: {bash['peak_rss_mb'] - bash_base['peak_rss_mb']:.1f} MB; "
          f"time ratio {bash['seconds'] / bash_base['seconds']:.2f}x")  # fmt: skip


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child_main(sys.argv[2:])
    else:
        main()
