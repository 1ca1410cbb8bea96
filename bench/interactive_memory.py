"""Memory and key echo of one long interactive session: do they grow with the session? (issue 36)

    .venv/bin/python bench/interactive_memory.py [--turns 1000] [--every 100] [--keys 30]

One interactive ``pi --model loop/loop-1`` in a 100x30 tmux pane (``tests/support/terminal.py``),
a session file on disk as a user's, against the loopback chat-completions server of
``tests/support/loopback.py``. Each turn is typed into the editor and submitted with Enter; its
answer first calls the ``read`` tool on a small file, then answers with a 120-word paragraph
ending in a word unique to the turn, which the bench waits for on the screen: two model requests,
one tool call and four session entries a turn, as in ``bench/rpc_memory.py``. Automatic compaction
is off, so the whole transcript stays in the context.

Printed after the first turn and every ``--every`` turns: the process's resident memory
(``VmRSS``) and the session file's size. At turn 10 and at the last turn, ``--keys`` characters
are typed one at a time into the idle editor; each latency runs from just before ``send-keys``
until the text typed so far is on the screen (polled every 2 ms), and p50/p99 are printed.

Targets: RSS after the last turn <= RSS after the first + 30 MiB, and key echo p99 at the last
turn within 1.5x of turn 10's (or within 5 ms of it: both are a few ms). Exit status 1 when one
is missed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from rpc_memory import bench_folders, rss_mib  # noqa: E402

from tests.support.loopback import LoopbackServer, Reply, write_models_json  # noqa: E402
from tests.support.terminal import Terminal, pi_env, tmux_available  # noqa: E402

BOUND_MIB = 30.0
PARAGRAPH = " ".join(f"word{i}" for i in range(120))
KEYS = "abcdefghijklmnopqrstuvwxyz0123456789"


def wait_screen(term: Terminal, needle: str, timeout: float, poll: float = 0.002) -> float:
    deadline = time.perf_counter() + timeout
    while needle not in term.screen():
        if time.perf_counter() > deadline:
            raise SystemExit(f"{needle!r} not on the screen after {timeout:g} s:\n{term.screen()}")
        time.sleep(poll)
    return time.perf_counter()


def key_echo(term: Terminal, keys: int) -> list[float]:
    """Latencies of ``keys`` characters typed into the idle editor; the editor is emptied after."""
    typed = "ZQ"
    term.send(typed)
    wait_screen(term, typed, 10)
    latencies = []
    for char in KEYS[:keys]:
        typed += char
        sent = time.perf_counter()
        term.send(char)
        latencies.append(wait_screen(term, typed, 5) - sent)
        time.sleep(0.04)
    term.send("\x7f" * (len(typed) + 2))
    term.wait_gone("ZQ", timeout=10)
    return latencies


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--keys", type=int, default=30)
    options = parser.parse_args()
    if not tmux_available():
        print("tmux is not installed")
        return 2
    root, home, agent, work = bench_folders("pi-interactive-memory-", {"quietStartup": True})
    env = pi_env(home, agent, PI_HOST_CACHE_DIR=str(root / "cache"), PI_OFFLINE="1", PYTHONPATH=str(REPO))
    replies = []
    for turn in range(1, options.turns + 1):
        replies += [
            Reply.tool("read", {"path": "notes.txt"}),
            Reply(f"answer {turn}: {PARAGRAPH} END{turn}X"),
        ]
    curve: list[tuple[int, float, int]] = []
    echoes: dict[int, list[float]] = {}
    started = time.monotonic()
    with LoopbackServer(replies) as server:
        write_models_json(agent, server.url)
        pi = str(REPO / ".venv" / "bin" / "pi")
        term = Terminal([pi, "--model", "loop/loop-1"], env=env, cwd=work, width=100, height=30)
        try:
            term.wait_for("loop-1", timeout=30)
            pid = term.pid  # the program itself, not tmux's shell
            for turn in range(1, options.turns + 1):
                term.send(f"turn {turn}: read the notes")
                term.press("Enter")
                wait_screen(term, f"END{turn}X", 60, poll=0.01)
                if turn in (10, options.turns):
                    time.sleep(0.3)  # the answer's last frame and the footer settle
                    echoes[turn] = key_echo(term, options.keys)
                if turn == 1 or turn % options.every == 0:
                    sessions = sum(p.stat().st_size for p in (agent / "sessions").rglob("*.jsonl"))
                    curve.append((turn, rss_mib(pid), sessions))
                    print(
                        f"turn {turn:5d}: RSS {curve[-1][1]:6.1f} MiB, session file {sessions / 1e6:6.2f} MB",
                        flush=True,
                    )
        finally:
            term.close()
    elapsed = time.monotonic() - started
    failed = False
    first, last = curve[0][1], curve[-1][1]
    growth = last - first
    verdict = "ok" if growth <= BOUND_MIB else "OVER"
    failed |= verdict != "ok"
    print(
        f"{options.turns} turns in {elapsed:.0f} s: RSS {first:.1f} -> {last:.1f} MiB "
        f"(+{growth:.1f} MiB, target <= +{BOUND_MIB:.0f} MiB) {verdict}"
    )
    if len(echoes) == 2:
        early, late = echoes[10], echoes[options.turns]
        e99, l99 = p99(early) * 1000, p99(late) * 1000
        verdict = "ok" if l99 <= max(1.5 * e99, e99 + 5) else "OVER"
        failed |= verdict != "ok"
        print(
            f"key echo, idle editor: turn 10 p50 {statistics.median(early) * 1000:.1f} ms p99 {e99:.1f} ms; "
            f"turn {options.turns} p50 {statistics.median(late) * 1000:.1f} ms p99 {l99:.1f} ms {verdict}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
