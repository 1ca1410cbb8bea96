"""openai-completions adapter throughput against a bare httpx-sse loop over the same bytes.

A 10,000-delta recorded chat-completions stream (text deltas, then a tool call whose arguments
arrive in many pieces, a finish chunk, a usage chunk) is served by a loopback HTTP server. In the
same run, interleaved, we time:

* ``bare``      httpx + httpx-sse: iterate the server-sent events, nothing else;
* ``bare+json`` the same loop plus ``orjson.loads`` of every event (the least any adapter does);
* ``adapter``   ``stream_completions`` consumed to its ``done`` event: request building, SSE,
                JSON, the parser, the MessageBuilder (partial message + one pydantic event per
                delta, jiter partial parse of tool arguments) and the stream guard.

Figures are medians of several runs; the ratio ``adapter / bare`` is the headline (target ≤ 1.5).
A second figure times partial tool-argument parsing alone: a 20 KB argument object streamed in
2,000 deltas through ``MessageBuilder.toolcall_delta`` (target ≤ 50 ms in total).

Run: ``.venv/bin/python bench/providers_throughput.py [--runs 7] [--deltas 10000]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

import orjson
from providers_common import measure, report

from pi_host.protocol import Model


def recorded_stream(deltas: int, tool_share: float = 0.1) -> bytes:
    """``deltas`` content pieces: text, then ``tool_share`` of them as tool-call argument pieces
    (a ~10 KB ``write`` call), a finish chunk and a usage chunk."""
    head = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1764460800,
        "model": "bench",
    }
    words = "the quick brown fox jumps over the lazy dog — ünïcode ✓ ".split(" ")
    tool_deltas = int(deltas * tool_share)
    text_deltas = deltas - tool_deltas
    out = []

    def chunk(delta, finish=None):
        body = {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
        out.append(b"data: " + orjson.dumps(body) + b"\n\n")

    chunk({"role": "assistant", "content": ""})
    for i in range(text_deltas):
        chunk({"content": words[i % len(words)] + " "})
    if tool_deltas:
        args = json.dumps({"path": "src/" + "x" * 40 + ".py", "content": "line\n" * (tool_deltas * 2)})
        size = max(1, len(args) // max(1, tool_deltas - 1))
        pieces = [args[i : i + size] for i in range(0, len(args), size)]
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "write", "arguments": ""},
                    }
                ]
            }
        )
        for piece in pieces:
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
    chunk({}, "tool_calls" if tool_deltas else "stop")
    usage = {"prompt_tokens": 100, "completion_tokens": deltas, "total_tokens": 100 + deltas}
    out.append(b"data: " + orjson.dumps({**head, "choices": [], "usage": usage}) + b"\n\n")
    out.append(b"data: [DONE]\n\n")
    return b"".join(out)


MODEL = {
    "id": "bench",
    "api": "openai-completions",
    "provider": "bench",
    "baseUrl": "{url}/v1",
    "maxTokens": 8192,
}


def partial_args_cost(total_bytes: int = 20_000, deltas: int = 2_000, runs: int = 7) -> list[float]:
    from pi_host.lib.llm.builder import MessageBuilder

    args = json.dumps(
        {"path": "src/big.py", "content": ("abcdefghij" * (total_bytes // 10))[: total_bytes - 40]}
    )
    size = len(args) // deltas + 1
    pieces = [args[i : i + size] for i in range(0, len(args), size)]
    model = Model(id="bench", api="openai-completions", provider="bench")
    results = []
    for _ in range(runs):
        builder = MessageBuilder(model)
        builder.toolcall_start(0, id="c", name="write")
        started = time.perf_counter()
        for piece in pieces:
            builder.toolcall_delta(0, piece)
        event = builder.toolcall_end(0)
        results.append(time.perf_counter() - started)
        assert event.tool_call.arguments["path"] == "src/big.py"
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--deltas", type=int, default=10_000)
    args = parser.parse_args()
    from pi_provider_openai.completions import stream_completions

    for label, share in (("text only", 0.0), ("90% text + 10% tool-argument deltas (~10 KB call)", 0.1)):
        data = recorded_stream(args.deltas, share)
        times = asyncio.run(measure(data, "/v1/chat/completions", stream_completions, MODEL, args.runs))
        report(f"openai-completions stream, {args.deltas} deltas, {label}", times, args.deltas, args.runs)
    cost = partial_args_cost()
    print(
        f"partial tool-argument parsing, 20 KB in 2,000 deltas: median {statistics.median(cost) * 1000:.1f} ms "
        f"(min {min(cost) * 1000:.1f} ms; target <= 50 ms)"
    )


if __name__ == "__main__":
    main()
