"""Cost of compaction's per-turn work on long sessions.

Between turns the compactor checks the token threshold (walks back from the leaf to the last
usable answer). It is compared with ``convert_to_llm`` over the same context, work every turn
already pays. ``prepare_compaction`` (projection of the whole branch + cut point) runs only when
compacting; it is compared with ``store.build_context()`` from a cold tree (what opening the
session costs).

    .venv/bin/python bench/compaction_threshold.py
"""

from __future__ import annotations

import statistics
import time

from pi_host.lib.compaction import CompactionSettings, prepare_compaction
from pi_host.lib.sessions.store import MemoryStore
from pi_host.loop.convert import convert_to_llm

USAGE = {"input": 1000, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1050}


def build(turns: int) -> MemoryStore:
    store = MemoryStore(".")
    store.append({"type": "model_change", "provider": "faux", "modelId": "faux-1"})
    store.append(
        {
            "type": "message",
            "message": {
                "role": "system",
                "content": "",
                "sections": {"preamble": "p" * 2000},
                "timestamp": 1,
            },
        }
    )
    for i in range(turns):
        store.append(
            {
                "type": "message",
                "message": {
                    "role": "user",
                    "content": [{"type": "text", "text": f"question {i} " * 20}],
                    "timestamp": 1,
                },
            }
        )
        store.append(
            {
                "type": "message",
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "toolCall", "id": f"c{i}", "name": "read", "arguments": {"path": f"f{i}.py"}}
                    ],
                    "api": "faux",
                    "provider": "faux",
                    "model": "faux-1",
                    "usage": USAGE,
                    "stopReason": "toolUse",
                    "timestamp": 1,
                },
            }
        )
        store.append(
            {
                "type": "message",
                "message": {
                    "role": "toolResult",
                    "toolCallId": f"c{i}",
                    "toolName": "read",
                    "content": [{"type": "text", "text": "x" * 800}],
                    "isError": False,
                    "timestamp": 1,
                },
            }
        )
        store.append(
            {
                "type": "message",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "answer " * 30}],
                    "api": "faux",
                    "provider": "faux",
                    "model": "faux-1",
                    "usage": USAGE,
                    "stopReason": "stop",
                    "timestamp": 1,
                },
            }
        )
    return store


def median_ms(fn, runs: int = 7) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


class FakeSession:
    def __init__(self, store):
        self.store = store
        self.messages = store.build_context().messages


def measure(turns: int) -> str:
    from pi_host.lib.compaction.projection import walk_back
    from pi_host.runtime.compactor import _context_tokens

    store = build(turns)
    session = FakeSession(store)
    check = median_ms(lambda: _context_tokens(walk_back(store), session.messages))
    convert = median_ms(lambda: convert_to_llm(session.messages))
    settings = CompactionSettings()
    prepare = median_ms(lambda: prepare_compaction(store.path(), settings, 0), runs=3)
    rebuild = median_ms(lambda: MemoryStore(".", entries=store.entries()).build_context(), runs=3)
    return (
        f"{turns:>6} {len(store.entries()):>8} {check:>13.3f} {convert:>11.3f} {check / convert:>7.3f}"
        f" {prepare:>11.1f} {rebuild:>12.1f} {prepare / rebuild:>7.2f}"
    )


def main() -> None:
    print(
        f"{'turns':>6} {'entries':>8} {'threshold ms':>13} {'convert ms':>11} {'ratio':>7}"
        f" {'prepare ms':>11} {'cold ctx ms':>12} {'ratio':>7}"
    )
    for turns in (250, 1000, 2500):
        print(measure(turns))


if __name__ == "__main__":
    main()
