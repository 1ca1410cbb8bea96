"""anthropic-messages adapter throughput against a bare httpx-sse loop over the same bytes.

A 10,000-delta recorded Messages stream (a thinking block, text deltas, then a tool_use block
whose ``input_json_delta`` pieces carry a ~10 KB argument object, message_delta with usage,
message_stop, a few pings) is served by the loopback test server. Interleaved in the same run:

* ``bare``       httpx + httpx-sse: iterate the server-sent events, nothing else;
* ``bare+json``  the same loop plus ``orjson.loads`` of every event (the least any adapter does);
* ``adapter``    ``pi_provider_anthropic.stream`` consumed to its ``done`` event (request building,
                 SSE, JSON, MessageBuilder events with the live partial message, partial tool
                 arguments, the stream guard).

Medians of several runs; the headline is ``adapter / bare`` (target ≤ 1.5).

Run: ``.venv/bin/python bench/providers_anthropic_throughput.py [--runs 7] [--deltas 10000]``
"""

from __future__ import annotations

import argparse
import asyncio
import json

import orjson
from providers_common import measure, report


def recorded_stream(deltas: int) -> bytes:
    out: list[bytes] = []

    def event(name: str, data: dict) -> None:
        out.append(b"event: " + name.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n")

    event(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_bench",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "claude-bench",
                "usage": {"input_tokens": 1200, "output_tokens": 1},
            },
        },
    )
    thinking = deltas // 10
    tool = deltas // 10
    text = deltas - thinking - tool
    words = "the quick brown fox jumps over the lazy dog — ünïcode ✓".split(" ")
    event(
        "content_block_start",
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
    )
    for i in range(thinking):
        event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": words[i % len(words)] + " "},
            },
        )
    event(
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "c2lnbmF0dXJl"},
        },
    )
    event("content_block_stop", {"type": "content_block_stop", "index": 0})
    event("ping", {"type": "ping"})
    event(
        "content_block_start",
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    )
    for i in range(text):
        event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "text_delta", "text": words[i % len(words)] + " "},
            },
        )
    event("content_block_stop", {"type": "content_block_stop", "index": 1})
    args = json.dumps({"path": "src/" + "x" * 40 + ".py", "content": "line\n" * (tool * 2)})
    size = max(1, len(args) // max(1, tool - 1))
    event(
        "content_block_start",
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {"type": "tool_use", "id": "toolu_b", "name": "write", "input": {}},
        },
    )
    for i in range(0, len(args), size):
        event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "input_json_delta", "partial_json": args[i : i + size]},
            },
        )
    event("content_block_stop", {"type": "content_block_stop", "index": 2})
    event(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": deltas},
        },
    )
    event("message_stop", {"type": "message_stop"})
    return b"".join(out)


MODEL = {
    "id": "claude-bench",
    "api": "anthropic-messages",
    "provider": "bench",
    "baseUrl": "{url}",
    "reasoning": True,
    "maxTokens": 16384,
    "contextWindow": 200000,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--deltas", type=int, default=10_000)
    args = parser.parse_args()
    from pi_provider_anthropic.stream import stream

    data = recorded_stream(args.deltas)
    times = asyncio.run(measure(data, "/v1/messages", stream, MODEL, args.runs, thinking_level="medium"))
    report(
        f"anthropic-messages stream: {args.deltas} deltas (10% thinking, 80% text, 10% tool input)",
        times,
        args.deltas,
        args.runs,
    )


if __name__ == "__main__":
    main()
