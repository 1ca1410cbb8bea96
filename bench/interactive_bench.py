"""Interactive mode in a real terminal: pi 1.6.0 and pi-host side by side, in the same run.

    .venv/bin/python bench/interactive_bench.py [--runs 5] [--only pi|pi-host] [--words 2000]

Each side runs ``pi --model loop/loop-1`` (pi-host: ``.venv/bin/pi``; pi: ``node dist/cli.js``)
in a 100x30 tmux pane (``tests/support/terminal.py``) against a loopback chat-completions
server (``tests/support/loopback.py``). Every run gets a fresh agent dir
(``PI_CODING_AGENT_DIR``, with the ``loop`` provider in ``models.json``), ``HOME`` and working
directory, and ``PI_TELEMETRY=0 PI_SKIP_VERSION_CHECK=1 PI_OFFLINE=1``; pi-host's cache dir
(``PI_HOST_CACHE_DIR``) is kept across the runs of a side, as it would be once installed. One
uncounted warm-up run per side fills the page cache; then the sides' runs alternate, run by run.
One run, one process:

1. **start-up to an editable prompt**: the clock starts just before ``tmux new-session``.
   ``raw mode`` is when the program has switched the pane's tty out of cooked mode (``ICANON``
   and ``ECHO`` off, polled every 2 ms from outside through ``#{pane_tty}``); before that the
   kernel would echo typed keys itself, so nothing is typed earlier. From then on the marker
   ``zqj`` is typed every 25 ms until it shows on the screen (polled every ``--poll-ms``):
   ``first echo`` is when it first appears. The editor is then emptied with backspaces.
2. **CPU to render the answer**: after 1 s idle (its CPU rate is the idle baseline), a prompt is
   submitted and the server streams ``--words`` words, one word per chunk every ``--delay-ms``.
   ``render wall`` runs from Enter until the answer's last word (``ENDOFANSWER``) is on the screen,
   ``lag`` is the part of it after the server sent its last chunk. ``answer CPU`` is the user + system CPU of
   the program's process tree (``/proc/<pid>/stat``: utime + stime + reaped children, all live
   descendants) from just before Enter until the screen has been still for 300 ms, minus the idle
   rate times that span.
3. **key-echo latency while streaming**: a second prompt streams another answer of the same
   size; once its first words are on the screen, ``--keys`` characters are typed one at a time
   (``ZQ`` first, unmeasured, so the editor line is unique on the screen). For each, the latency
   runs from just before ``send-keys`` until ``ZQ<typed so far>`` is on the screen (polled every
   ``--poll-ms``; the next key goes 40 ms after the echo). p50/p99/max are over every key of every
   run. The floor of this method is measured on ``cat`` in the same kind of pane (the kernel
   echoes, no program in the loop): ``harness echo`` and the cost of one ``capture-pane``.
4. **Escape to aborted**: while that answer still streams, Escape is pressed once (the process's
   first Escape) and the clock stops when one more "Aborted" is on the screen (polled every
   ``--poll-ms``); the figure is the median over the runs.

Figures are medians over the runs (latencies: pooled percentiles); the last column is
pi-host / pi. A side that cannot start (pi not installed, pi-host without an interactive mode)
is reported with its last screen and the other side is still measured.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.loopback import LoopbackServer, Reply, long_text, write_models_json  # noqa: E402
from tests.support.terminal import Terminal, cpu_seconds, tmux_available  # noqa: E402

WIDTH, HEIGHT = 100, 30
MARKER = "zqj"
TYPED_PREFIX = "ZQ"
KEYS = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOP"
ABORTED = "borted"  # pi and pi-host both say "Aborted" (pi-host: "Aborted: Request was aborted")
END = "ENDOFANSWER"  # the answer's last word: one token, whatever the renderer's line breaks


class SideFailed(Exception):
    pass


@dataclass
class RunResult:
    raw_mode: float = 0.0
    first_echo: float = 0.0
    render_wall: float = 0.0
    lag: float = 0.0
    answer_cpu: float = 0.0
    idle_rate: float = 0.0
    echo: list[float] = field(default_factory=list)
    echo_timeouts: int = 0
    streaming_ended_early: bool = False
    peak_rss: float = 0.0
    escape: float | None = None


START_TARGET = 0.35
"""Issue 36: start-up to an editable prompt (first echo) at most this share of pi 1.6.0's."""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def wait_screen(term: Terminal, needle: str, timeout: float, poll: float) -> float:
    """Poll the visible screen until ``needle`` is on it; the perf_counter time it was seen."""
    deadline = time.perf_counter() + timeout
    while True:
        if needle in term.screen():
            return time.perf_counter()
        now = time.perf_counter()
        if now > deadline:
            raise SideFailed(f"{needle!r} not on the screen after {timeout:g} s:\n{term.screen()}")
        if term.exit_status() is not None:
            raise SideFailed(
                f"exited with status {term.exit_status()} waiting for {needle!r}:\n{term.screen()}"
            )
        time.sleep(poll)


def wait_still(term: Terminal, quiet: float = 0.3, timeout: float = 30, poll: float = 0.02) -> float:
    """Until the screen has not changed for ``quiet`` seconds; when it last changed."""
    deadline = time.perf_counter() + timeout
    last, changed = term.screen(ansi=True), time.perf_counter()
    while time.perf_counter() < deadline:
        time.sleep(poll)
        screen = term.screen(ansi=True)
        now = time.perf_counter()
        if screen != last:
            last, changed = screen, now
        elif now - changed >= quiet:
            return changed
    return changed


def peak_rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def one_run(side: str, argv: list[str], args: argparse.Namespace, cache: str) -> RunResult:
    poll = args.poll_ms / 1000
    result = RunResult()
    root = tempfile.mkdtemp(prefix=f"pi-ibench-{side}-")
    agent, home, cwd = (os.path.join(root, name) for name in ("agent", "home", "work"))
    for directory in (agent, home, cwd):
        os.makedirs(directory)
    text = long_text(args.words) + "\n\n" + END
    answers = [Reply(text, delay=args.delay_ms / 1000) for _ in range(2)]
    server = LoopbackServer(answers).start()
    write_models_json(agent, server.url)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
        "LANG": "C.UTF-8",
        "PI_CODING_AGENT_DIR": agent,
        "PI_HOST_CACHE_DIR": cache,
        "PI_TELEMETRY": "0",
        "PI_SKIP_VERSION_CHECK": "1",
        "PI_OFFLINE": "1",
    }
    term = None
    try:
        start = time.perf_counter()
        term = Terminal([*argv, "--model", "loop/loop-1"], env=env, cwd=cwd, width=WIDTH, height=HEIGHT)
        deadline = start + args.timeout
        while not term.raw_mode():
            if term.exit_status() is not None:
                raise SideFailed(f"exited with status {term.exit_status()} before raw mode:\n{term.screen()}")
            if time.perf_counter() > deadline:
                raise SideFailed(f"no raw mode after {args.timeout:g} s:\n{term.screen()}")
            time.sleep(0.002)
        result.raw_mode = time.perf_counter() - start
        sent, next_send = 0, 0.0
        while True:
            now = time.perf_counter()
            if now >= next_send:
                term.send(MARKER)
                sent += 1
                next_send = now + 0.025
            if MARKER in term.screen():
                result.first_echo = time.perf_counter() - start
                break
            if term.exit_status() is not None:
                raise SideFailed(f"exited with status {term.exit_status()}:\n{term.screen()}")
            if now > deadline:
                raise SideFailed(f"typed text never echoed after {args.timeout:g} s:\n{term.screen()}")
            time.sleep(poll)
        term.send("\x7f" * (sent * len(MARKER) + 4))
        term.wait_gone(MARKER, timeout=10)
        wait_still(term, quiet=0.3)

        # 2. CPU to render one answer
        cpu0, t0 = cpu_seconds(term.pid), time.perf_counter()
        time.sleep(1.0)
        cpu1, t1 = cpu_seconds(term.pid), time.perf_counter()
        result.idle_rate = (cpu1 - cpu0) / (t1 - t0)
        marker = END
        term.send("Write a long answer")
        wait_screen(term, "Write a long answer", 10, poll)
        cpu_start, enter = cpu_seconds(term.pid), time.perf_counter()
        term.press("Enter")
        seen = wait_screen(term, marker, args.timeout + args.words * args.delay_ms / 1000 * 3, poll)
        exchange = server.wait_finished(0, timeout=30)
        result.render_wall = seen - enter
        # perf_counter and monotonic are the same clock on Linux; the server stamps monotonic
        result.lag = max(0.0, seen - (exchange.finished or seen))
        settled = wait_still(term, quiet=0.3)
        cpu_end = cpu_seconds(term.pid)
        span = max(settled, seen) - enter
        result.answer_cpu = cpu_end - cpu_start - result.idle_rate * span

        # 3. key echo while the second answer streams
        term.send("Another long answer")
        wait_screen(term, "Another long answer", 10, poll)
        term.press("Enter")
        server.wait_streaming(1, timeout=30)
        wait_screen(term, "[3] ", 30, poll)  # the new answer's third line is being drawn
        term.send(TYPED_PREFIX)
        wait_screen(term, TYPED_PREFIX, 10, poll)
        typed = TYPED_PREFIX
        for char in KEYS[: args.keys]:
            typed += char
            sent_at = time.perf_counter()
            term.send(char)
            try:
                seen_at = wait_screen(term, typed, 2.0, poll)
            except SideFailed:
                result.echo_timeouts += 1
                seen_at = time.perf_counter()
            result.echo.append(seen_at - sent_at)
            time.sleep(0.04)
        result.streaming_ended_early = server.exchanges[1].status != "streaming"
        result.peak_rss = peak_rss_mib(term.pid)

        # 4. Escape to "Aborted" (the process's first Escape, as a user's first of the day)
        if not result.streaming_ended_early:
            before = term.screen().count(ABORTED)
            sent_at = time.perf_counter()
            term.press("Escape")
            deadline = sent_at + 10
            while term.screen().count(ABORTED) <= before:
                if time.perf_counter() > deadline:
                    raise SideFailed(f"Escape did not abort within 10 s:\n{term.screen()}")
                time.sleep(poll)
            result.escape = time.perf_counter() - sent_at
        return result
    finally:
        if term is not None:
            term.close()
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


def harness_floor(args: argparse.Namespace) -> tuple[list[float], float]:
    """Echo latency of ``cat`` (the kernel echoes) and the cost of one capture-pane, seconds."""
    poll = args.poll_ms / 1000
    latencies = []
    with Terminal(
        ["cat"], env={"PATH": "/usr/bin:/bin"}, cwd=tempfile.gettempdir(), width=WIDTH, height=HEIGHT
    ) as term:
        for _ in range(args.runs):
            term.press("C-u")  # the tty's line kill: the echoed line is erased, cat reads nothing
            term.wait_gone(TYPED_PREFIX, timeout=5)
            term.send(TYPED_PREFIX)
            wait_screen(term, TYPED_PREFIX, 5, poll)
            typed = TYPED_PREFIX
            for char in KEYS[: args.keys]:
                typed += char
                sent_at = time.perf_counter()
                term.send(char)
                latencies.append(wait_screen(term, typed, 2, poll) - sent_at)
                time.sleep(0.01)
        count = 300
        started = time.perf_counter()
        for _ in range(count):
            term.screen()
        capture = (time.perf_counter() - started) / count
    return latencies, capture


def _summary(runs: list[RunResult]) -> dict:
    echo = [value for run in runs for value in run.echo]
    escapes = [run.escape for run in runs if run.escape is not None]

    def median(name: str) -> float:
        return statistics.median(getattr(run, name) for run in runs)

    return {
        "raw mode (ms)": median("raw_mode") * 1000,
        "first echo (ms)": median("first_echo") * 1000,
        "render wall (s)": median("render_wall"),
        "lag after last chunk (ms)": median("lag") * 1000,
        "answer CPU (s)": median("answer_cpu"),
        "idle CPU (ms per s)": median("idle_rate") * 1000,
        "echo p50 (ms)": percentile(echo, 0.5) * 1000,
        "echo p99 (ms)": percentile(echo, 0.99) * 1000,
        "echo max (ms)": max(echo) * 1000,
        "echo timeouts (> 2 s)": float(sum(run.echo_timeouts for run in runs)),
        "peak RSS (MiB)": median("peak_rss"),
        "escape to aborted (ms)": statistics.median(escapes) * 1000 if escapes else None,
    }


def measure_sides(
    sides: list[tuple[str, list[str] | None, str]], args: argparse.Namespace
) -> dict[str, dict]:
    """One uncounted warm-up per side, then ``--runs`` runs of each side interleaved run by run
    (the order alternating), so a slow phase of the machine hits both sides alike."""
    results: dict[str, dict] = {}
    runs: dict[str, list[RunResult]] = {}
    caches: dict[str, str] = {}
    for side, argv, why in sides:
        if argv is None:
            print(f"{side}: not measured ({why})", flush=True)
            results[side] = {"error": why}
        else:
            runs[side], caches[side] = [], tempfile.mkdtemp(prefix=f"pi-ibench-cache-{side}-")
    commands = {side: argv for side, argv, _ in sides if argv is not None}
    try:
        for index in range(args.runs + 1):
            order = list(commands) if index % 2 == 0 else list(reversed(commands))
            for side in order:
                if side in results:  # failed earlier
                    continue
                label = "warm-up" if index == 0 else f"run {index}/{args.runs}"
                try:
                    run = one_run(side, commands[side], args, caches[side])
                except SideFailed as failure:
                    print(f"{side}: {label} failed: {failure}", flush=True)
                    results[side] = {"error": str(failure).split("\n", 1)[0]}
                    continue
                if index:
                    runs[side].append(run)
                print(
                    f"{side}: {label}: first echo {run.first_echo * 1000:.0f} ms, render {run.render_wall:.2f} s, "
                    f"CPU {run.answer_cpu:.2f} s, echo p50 {percentile(run.echo, 0.5) * 1000:.1f} ms"
                    + (f", escape {run.escape * 1000:.0f} ms" if run.escape is not None else "")
                    + (f", {run.echo_timeouts} echo timeouts" if run.echo_timeouts else "")
                    + (", streaming ended before typing did" if run.streaming_ended_early else ""),
                    flush=True,
                )
    finally:
        for cache in caches.values():
            shutil.rmtree(cache, ignore_errors=True)
    for side in commands:
        results.setdefault(side, _summary(runs[side]))
    return {side: results[side] for side, _, _ in sides}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", choices=("pi", "pi-host"))
    parser.add_argument("--words", type=int, default=2000, help="words per streamed answer")
    parser.add_argument("--delay-ms", type=float, default=5.0, help="pause between streamed words")
    parser.add_argument("--keys", type=int, default=40, help="characters typed per run (at most 50)")
    parser.add_argument("--poll-ms", type=float, default=5.0, help="screen polling interval")
    parser.add_argument("--timeout", type=float, default=30.0, help="start-up timeout, seconds")
    args = parser.parse_args()
    args.keys = max(1, min(args.keys, len(KEYS)))
    if not tmux_available():
        print("tmux >= 3.2 is required")
        return 1

    from tests.support.pi_node import find_pi

    sides: list[tuple[str, list[str] | None, str]] = []
    if args.only in (None, "pi"):
        pi = find_pi()
        sides.append(
            ("pi", list(pi) if pi else None, "pi 1.6.0 is not installed, see tests/support/pi_node.py")
        )
    if args.only in (None, "pi-host"):
        pi_host = Path(sys.executable).with_name("pi")
        sides.append(("pi-host", [str(pi_host)] if pi_host.exists() else None, f"{pi_host} is missing"))

    floor, capture = harness_floor(args)
    print(
        f"{os.cpu_count()} CPUs; {args.runs} runs; answers of {args.words} words, one every {args.delay_ms:g} ms; "
        f"{args.keys} keys per run; screen polled every {args.poll_ms:g} ms",
        flush=True,
    )
    print(
        f"harness floor (cat, kernel echo): echo p50 {percentile(floor, 0.5) * 1000:.1f} ms, "
        f"p99 {percentile(floor, 0.99) * 1000:.1f} ms, max {max(floor) * 1000:.1f} ms; "
        f"one capture-pane {capture * 1e6:.0f} us",
        flush=True,
    )
    results = measure_sides(sides, args)

    names = [name for name, _, _ in sides]
    metrics = next((list(r) for r in results.values() if "error" not in r), [])
    print()
    header = f"{'':28s}" + "".join(f"{name:>14s}" for name in names)
    if len(names) == 2:
        header += f"{'pi-host/pi':>12s}"
    print(header)
    for metric in metrics:
        row = f"{metric:28s}"
        values = []
        for name in names:
            value = results[name].get(metric)
            values.append(value)
            row += f"{value:14.2f}" if value is not None else f"{'-':>14s}"
        if len(names) == 2 and all(v is not None for v in values):
            row += f"{values[1] / values[0]:11.2f}x" if values[0] else f"{'-':>12s}"
        print(row)
    for name in names:
        if "error" in results[name]:
            print(f"{name}: did not run: {results[name]['error']}")
    ours, theirs = results.get("pi-host", {}), results.get("pi", {})
    if "first echo (ms)" in ours and "first echo (ms)" in theirs:
        ratio = ours["first echo (ms)"] / theirs["first echo (ms)"]
        verdict = "ok" if ratio <= START_TARGET else "OVER"
        print(f"-> start-up to first echo, pi-host/pi {ratio:.2f}x (target <= {START_TARGET}x) {verdict}")
        return 0 if ratio <= START_TARGET else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
