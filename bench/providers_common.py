"""Shared measuring code for the provider throughput benches (not a bench itself).

``bench/providers_throughput.py`` (openai-completions) and
``bench/providers_anthropic_throughput.py`` time the same three things over one recorded stream
served by the loopback test server, interleaved in one run so machine load hits all alike:

* ``bare``       httpx + httpx-sse: iterate the server-sent events, nothing else;
* ``bare+json``  the same loop plus ``orjson.loads`` of every event (the least any adapter does);
* ``adapter``    the adapter's stream function consumed to its ``done`` event.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import orjson
from httpx_sse import EventSource

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "providers"))

from sse_server import Reply, SSEServer  # noqa: E402

from pi_host.protocol import LlmContext, Model, StreamOptions, SystemMessage, ToolDecl, UserMessage  # noqa: E402

StreamFn = Callable[[Any, Any, Any], Any]


async def bare(client: httpx.AsyncClient, url: str, decode: bool) -> int:
    count = 0
    async with client.stream("POST", url, json={"model": "bench", "stream": True}) as response:
        async for sse in EventSource(response).aiter_sse():
            if decode and sse.data != "[DONE]":
                orjson.loads(sse.data)
            count += 1
    return count


def bench_context() -> LlmContext:
    return LlmContext(
        messages=[SystemMessage(sections={"preamble": "bench"}), UserMessage(content="go")],
        tools=[ToolDecl(name="write", description="Write a file")],
    )


async def run_adapter(stream: StreamFn, model: Model, options: StreamOptions) -> int:
    count = 0
    last = None
    async for event in stream(model, bench_context(), options):
        count += 1
        last = event
    assert last is not None and last.type == "done", getattr(last, "error", None)
    return count


async def measure(
    data: bytes,
    path: str,
    stream: StreamFn,
    model_fields: dict[str, Any],
    runs: int,
    **option_fields: Any,
) -> dict[str, list[float]]:
    """Serve ``data`` at any path; time ``bare`` / ``bare+json`` against ``server.url + path`` and
    ``stream`` with a model whose ``baseUrl`` is filled in by ``model_fields["baseUrl"]`` (a format
    string with ``{url}``)."""
    from pi_host.llm.http import create_client

    server = SSEServer().start()
    server.default = Reply.sse(data, chunk_size=16384)
    client = create_client()
    fields = dict(model_fields)
    fields["baseUrl"] = fields["baseUrl"].format(url=server.url)
    model = Model.model_validate(fields)
    options = StreamOptions(api_key="k", extra={"client": client}, **option_fields)
    url = server.url + path
    times: dict[str, list[float]] = {"bare": [], "bare+json": [], "adapter": []}
    try:
        await bare(client, url, True)  # warm-up (connection, imports)
        await run_adapter(stream, model, options)
        for _ in range(runs):
            for name in times:
                started = time.perf_counter()
                if name == "adapter":
                    await run_adapter(stream, model, options)
                else:
                    await bare(client, url, name == "bare+json")
                times[name].append(time.perf_counter() - started)
    finally:
        await client.aclose()
        server.stop()
    return times


def report(title: str, times: dict[str, list[float]], deltas: int, runs: int) -> None:
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"{title}; median of {runs} runs, loopback")
    for name, value in medians.items():
        print(f"  {name:10s} {value * 1000:8.1f} ms  ({deltas / value:,.0f} deltas/s)")
    print(f"  ratio adapter / bare      = {medians['adapter'] / medians['bare']:.2f}x  (target <= 1.5x)")
    print(f"  ratio adapter / bare+json = {medians['adapter'] / medians['bare+json']:.2f}x")
    best = {name: min(values) for name, values in times.items()}
    print(
        f"  (best-of-{runs} ratio adapter / bare = {best['adapter'] / best['bare']:.2f}x; "
        "the machine's load moves medians)"
    )
