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
import sys
import time
from pathlib import Path

import httpx
import orjson
from httpx_sse import EventSource

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "providers"))

from sse_server import Reply, SSEServer  # noqa: E402

from pi_host.protocol import LlmContext, Model, StreamOptions, SystemMessage, ToolDecl, UserMessage  # noqa: E402


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


async def bare(client: httpx.AsyncClient, url: str, decode: bool) -> int:
    count = 0
    async with client.stream("POST", url, json={"model": "bench", "stream": True}) as response:
        async for sse in EventSource(response).aiter_sse():
            if decode and sse.data != "[DONE]":
                orjson.loads(sse.data)
            count += 1
    return count


async def adapter(model: Model, options: StreamOptions) -> int:
    from pi_provider_openai.completions import stream_completions

    context = LlmContext(
        messages=[SystemMessage(sections={"preamble": "bench"}), UserMessage(content="go")],
        tools=[ToolDecl(name="write", description="Write a file")],
    )
    count = 0
    last = None
    async for event in stream_completions(model, context, options):
        count += 1
        last = event
    assert last is not None and last.type == "done", getattr(last, "error", None)
    return count


async def measure(runs: int, deltas: int, tool_share: float) -> dict[str, list[float]]:
    from pi_host.llm.http import create_client

    data = recorded_stream(deltas, tool_share)
    server = SSEServer().start()
    server.default = Reply.sse(data, chunk_size=16384)
    url = server.url + "/v1/chat/completions"
    client = create_client()
    model = Model.model_validate(
        {
            "id": "bench",
            "api": "openai-completions",
            "provider": "bench",
            "baseUrl": server.url + "/v1",
            "maxTokens": 8192,
        }
    )
    options = StreamOptions(api_key="k", extra={"client": client})
    times: dict[str, list[float]] = {"bare": [], "bare+json": [], "adapter": []}
    try:
        await bare(client, url, True)  # warm-up (connection, imports)
        await adapter(model, options)
        for _ in range(runs):
            for name in times:
                started = time.perf_counter()
                if name == "adapter":
                    await adapter(model, options)
                else:
                    await bare(client, url, name == "bare+json")
                times[name].append(time.perf_counter() - started)
    finally:
        await client.aclose()
        server.stop()
    return times


def partial_args_cost(total_bytes: int = 20_000, deltas: int = 2_000, runs: int = 7) -> list[float]:
    from pi_host.llm.builder import MessageBuilder

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
    for label, share in (("text only", 0.0), ("90% text + 10% tool-argument deltas (~10 KB call)", 0.1)):
        times = asyncio.run(measure(args.runs, args.deltas, share))
        medians = {name: statistics.median(values) for name, values in times.items()}
        print(
            f"openai-completions stream, {args.deltas} deltas, {label}; median of {args.runs} runs, loopback"
        )
        for name, value in medians.items():
            print(f"  {name:10s} {value * 1000:8.1f} ms  ({args.deltas / value:,.0f} deltas/s)")
        print(f"  ratio adapter / bare      = {medians['adapter'] / medians['bare']:.2f}x  (target <= 1.5x)")
        print(f"  ratio adapter / bare+json = {medians['adapter'] / medians['bare+json']:.2f}x")
        best = {name: min(values) for name, values in times.items()}
        print(
            f"  (best-of-{args.runs} ratio adapter / bare = {best['adapter'] / best['bare']:.2f}x; "
            "the machine's load moves medians)"
        )
    cost = partial_args_cost()
    print(
        f"partial tool-argument parsing, 20 KB in 2,000 deltas: median {statistics.median(cost) * 1000:.1f} ms "
        f"(min {min(cost) * 1000:.1f} ms; target <= 50 ms)"
    )


if __name__ == "__main__":
    main()
