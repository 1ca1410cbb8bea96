"""Generate a large pi v3 session file for the session benchmarks.

    .venv/bin/python bench/sessions_generate.py OUT.jsonl [--entries 20000] [--mib 50] [--cwd DIR]

The file is in pi 1.6.0's format and looks like a long real session: header, model and
thinking-level changes, then turns of user prompt → assistant tool call → tool result → assistant
answer, with tool outputs sized so the whole file reaches about ``--mib`` MiB, and a compaction
every ``--compaction-every`` entries (each keeping the last two turns before it; the last one
``--tail`` entries before the end, so the context a resume rebuilds is a summary and a few turns,
as in a real long session). Deterministic (seeded).
"""

from __future__ import annotations

import argparse
import os
import random
import uuid
from datetime import UTC, datetime, timedelta

import orjson

WORDS = (
    "alpha beta gamma delta session entry parser module import return value config path file test "
    "build error result output function class method string number list dict async await yield"
).split()


def _text(rng: random.Random, size: int) -> str:
    out: list[str] = []
    total = 0
    while total < size:
        line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 14)))
        out.append(line)
        total += len(line) + 1
    return "\n".join(out)


def _usage(rng: random.Random) -> dict:
    inp, out = rng.randint(1000, 90000), rng.randint(10, 900)
    return {
        "input": inp,
        "output": out,
        "cacheRead": 0,
        "cacheWrite": 0,
        "reasoning": 0,
        "totalTokens": inp + out,
        "cost": {
            "input": 0,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "total": 0,
            "totalFromProvider": False,
        },
    }


def generate(
    path: str,
    entries: int,
    mib: float,
    cwd: str,
    seed: int = 7,
    *,
    provider: str = "bench-oa",
    model: str = "oa-1",
    api: str = "openai-completions",
    compaction_every: int = 2000,
    tail: int = 40,
) -> None:
    rng = random.Random(seed)
    start = datetime(2026, 11, 1, 9, 0, 0, tzinfo=UTC)
    clock = [start]

    def iso() -> str:
        clock[0] += timedelta(milliseconds=rng.randint(5, 900))
        return clock[0].strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"

    def ms() -> int:
        return int(clock[0].timestamp() * 1000)

    used: set[str] = set()

    def new_id() -> str:
        while True:
            candidate = uuid.UUID(int=rng.getrandbits(128)).hex[:8]
            if candidate not in used:
                used.add(candidate)
                return candidate

    # Budget: tool outputs carry the bulk; a turn is 4 entries, one of them a tool result.
    turns = max(1, (entries - 4) // 4)
    output_size = max(200, int((mib * 1024 * 1024) / turns) - 2700)
    session_id = str(uuid.UUID(int=rng.getrandbits(128)))
    with open(path, "wb") as handle:
        handle.write(
            orjson.dumps({"type": "session", "version": 3, "id": session_id, "timestamp": iso(), "cwd": cwd})
            + b"\n"
        )
        parent = None

        def put(kind: str, **fields) -> None:
            nonlocal parent
            entry = {"type": kind, "id": new_id(), "parentId": parent, "timestamp": iso(), **fields}
            handle.write(orjson.dumps(entry) + b"\n")
            parent = entry["id"]

        put("model_change", provider=provider, modelId=model)
        put("thinking_level_change", thinkingLevel="off")
        written = 2
        turn = 0
        user_ids: list[str] = []
        last_compaction = 0
        final_compaction = entries - tail
        while written + 4 <= entries:
            turn += 1
            put(
                "message",
                message={
                    "role": "user",
                    "content": [{"type": "text", "text": _text(rng, 200)}],
                    "timestamp": ms(),
                },
            )
            user_ids.append(parent)
            call_id = f"call_{turn:06d}"
            put(
                "message",
                message={
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": _text(rng, 300)},
                        {
                            "type": "toolCall",
                            "id": call_id,
                            "name": "bash",
                            "arguments": {"command": f"cat file{turn}.txt"},
                        },
                    ],
                    "api": api,
                    "provider": provider,
                    "model": model,
                    "usage": _usage(rng),
                    "stopReason": "toolUse",
                    "timestamp": ms(),
                    "durationMs": rng.randint(100, 3000),
                    "thinkingLevel": "off",
                },
            )
            put(
                "message",
                message={
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": "bash",
                    "content": [{"type": "text", "text": _text(rng, output_size)}],
                    "isError": False,
                    "durationMs": rng.randint(1, 500),
                    "timestamp": ms(),
                },
            )
            put(
                "message",
                message={
                    "role": "assistant",
                    "content": [{"type": "text", "text": _text(rng, 400)}],
                    "api": api,
                    "provider": provider,
                    "model": model,
                    "usage": _usage(rng),
                    "stopReason": "stop",
                    "timestamp": ms(),
                    "durationMs": rng.randint(100, 3000),
                    "thinkingLevel": "off",
                },
            )
            written += 4
            due = written - last_compaction >= compaction_every or (
                last_compaction < final_compaction <= written and written + 5 <= entries
            )
            if due and len(user_ids) > 2:
                put(
                    "compaction",
                    summary=_text(rng, 1500),
                    firstKeptEntryId=user_ids[-2],
                    tokensBefore=rng.randint(150_000, 190_000),
                    details={"readFiles": [f"file{turn}.txt"], "modifiedFiles": []},
                )
                written += 1
                last_compaction = written
        while written < entries:
            put("label", targetId=parent, label=f"mark {written}")
            written += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out")
    parser.add_argument("--entries", type=int, default=20000)
    parser.add_argument("--mib", type=float, default=50)
    parser.add_argument("--cwd", default=os.getcwd())
    parser.add_argument("--compaction-every", type=int, default=2000)
    parser.add_argument("--tail", type=int, default=40)
    args = parser.parse_args()
    generate(
        args.out,
        args.entries,
        args.mib,
        os.path.abspath(args.cwd),
        compaction_every=args.compaction_every,
        tail=args.tail,
    )
    size = os.path.getsize(args.out)
    print(f"wrote {args.out}: {args.entries} entries, {size / 1024 / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
