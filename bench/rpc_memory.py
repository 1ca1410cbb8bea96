"""Memory of one long RPC session: does pi-host's RSS grow with the session? (issue 36)

    .venv/bin/python bench/rpc_memory.py [--turns 1000] [--every 100]

One ``pi --mode rpc --model loop/loop-1`` process (a session file on disk, as a user's) against the
loopback chat-completions server of ``tests/support/loopback.py``. Each turn is a prompt whose
answer first calls the ``read`` tool on a small file, then answers with a paragraph: two model
requests, one tool call, four session entries. The agent's resident memory (``VmRSS`` of
``/proc/<pid>/status``) is printed after the first turn and every ``--every`` turns, with the
session file's size. Automatic compaction is off (the loopback server answers in order), so
the whole transcript stays in the context. Target: RSS after the last turn <= RSS after the first + 30 MiB. Exit status
1 when it is missed.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pi_host.rpc import RpcClient  # noqa: E402
from tests.support.loopback import LoopbackServer, Reply, write_models_json  # noqa: E402

BOUND_MIB = 30.0
PARAGRAPH = " ".join(f"word{i}" for i in range(120))


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def bench_folders(prefix: str, settings: dict) -> tuple[Path, Path, Path, Path]:
    """A temporary root with home, agent dir and working directory: the file each turn reads, and
    settings.json with automatic compaction off (the loopback server answers in order, so a
    summary request would take a turn's reply; the transcript passes 128k tokens near turn 400)."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    home, agent, work = root / "home", root / "agent", root / "work"
    for folder in (home, agent, work):
        folder.mkdir()
    (work / "notes.txt").write_text("the notes of this bench\n" * 20)
    (agent / "settings.json").write_text(json.dumps({"compaction": {"enabled": False}, **settings}))
    return root, home, agent, work


def session_bytes(agent: Path) -> int:
    return sum(path.stat().st_size for path in (agent / "sessions").rglob("*.jsonl"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--every", type=int, default=100)
    options = parser.parse_args()
    root, home, agent, work = bench_folders("pi-rpc-memory-", {})
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(
        HOME=str(home),
        PI_CODING_AGENT_DIR=str(agent),
        PI_HOST_CACHE_DIR=str(root / "cache"),
        PI_OFFLINE="1",
        PYTHONPATH=str(REPO),
    )
    replies = []
    for turn in range(options.turns):
        replies += [Reply.tool("read", {"path": "notes.txt"}), Reply(f"answer {turn}: {PARAGRAPH}")]
    curve: list[tuple[int, float, int]] = []
    started = time.monotonic()
    with LoopbackServer(replies) as server:
        write_models_json(agent, server.url)
        with RpcClient(args=["--model", "loop/loop-1"], cwd=work, env=env, timeout=60) as client:
            pid = client.process.pid
            for turn in range(1, options.turns + 1):
                client.prompt_and_wait(f"turn {turn}: read the notes")
                client.drain_events()
                if turn == 1 or turn % options.every == 0:
                    gc.collect()  # this process's own garbage, not the agent's
                    curve.append((turn, rss_mib(pid), session_bytes(agent)))
                    print(
                        f"turn {turn:5d}: RSS {curve[-1][1]:6.1f} MiB, session file {curve[-1][2] / 1e6:6.2f} MB"
                    )
    elapsed = time.monotonic() - started
    first, last = curve[0][1], curve[-1][1]
    growth = last - first
    verdict = "ok" if growth <= BOUND_MIB else "OVER"
    print(
        f"{options.turns} turns in {elapsed:.0f} s: RSS {first:.1f} -> {last:.1f} MiB "
        f"(+{growth:.1f} MiB, target <= +{BOUND_MIB:.0f} MiB) {verdict}"
    )
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
