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
sys.path.insert(0, str(ROOT))

from pi_host.protocol import LlmContext, Model, StreamOptions, SystemMessage, ToolDecl, UserMessage  # noqa: E402
from tests.support.providers.sse import Reply, SSEServer  # noqa: E402

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


def _serve(data: bytes, urls: Any, stop: Any) -> None:
    """Child process: serve ``data`` until told to stop, so the server never competes with the
    measured client for the GIL."""
    server = SSEServer().start()
    server.default = Reply.sse(data, chunk_size=16384)
    urls.put(server.url)
    stop.wait()
    server.stop()


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
    import multiprocessing

    from pi_host.lib.llm.http import create_client

    mp = multiprocessing.get_context("fork")
    urls, stop = mp.Queue(), mp.Event()
    child = mp.Process(target=_serve, args=(data, urls, stop), daemon=True)
    child.start()
    server_url = urls.get(timeout=30)
    client = create_client()
    fields = dict(model_fields)
    fields["baseUrl"] = fields["baseUrl"].format(url=server_url)
    model = Model.model_validate(fields)
    options = StreamOptions(api_key="k", extra={"client": client}, **option_fields)
    url = server_url + path
    times: dict[str, list[float]] = {"bare": [], "bare+json": [], "adapter": []}
    cpu: dict[str, list[float]] = {name: [] for name in times}
    try:
        await bare(client, url, True)  # warm-up (connection, imports)
        await run_adapter(stream, model, options)
        for _ in range(runs):
            for name in times:
                started, cpu_started = time.perf_counter(), time.process_time()
                if name == "adapter":
                    await run_adapter(stream, model, options)
                else:
                    await bare(client, url, name == "bare+json")
                times[name].append(time.perf_counter() - started)
                cpu[name].append(time.process_time() - cpu_started)
    finally:
        await client.aclose()
        stop.set()
        child.join(timeout=10)
    times.update({f"cpu:{name}": values for name, values in cpu.items()})
    return times


def report(title: str, times: dict[str, list[float]], deltas: int, runs: int) -> None:
    cpu = {name[4:]: values for name, values in times.items() if name.startswith("cpu:")}
    times = {name: values for name, values in times.items() if not name.startswith("cpu:")}
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"{title}; median of {runs} runs, server in another process")
    for name, value in medians.items():
        print(f"  {name:10s} {value * 1000:8.1f} ms  ({deltas / value:,.0f} deltas/s)")
    if cpu:
        cpu_medians = {name: statistics.median(values) for name, values in cpu.items()}
        print(
            f"  client CPU time: bare {cpu_medians['bare'] * 1000:.1f} ms, "
            f"adapter {cpu_medians['adapter'] * 1000:.1f} ms, "
            f"ratio {cpu_medians['adapter'] / cpu_medians['bare']:.2f}x"
        )
    print(f"  ratio adapter / bare      = {medians['adapter'] / medians['bare']:.2f}x  (target <= 1.5x)")
    print(f"  ratio adapter / bare+json = {medians['adapter'] / medians['bare+json']:.2f}x")
    best = {name: min(values) for name, values in times.items()}
    print(
        f"  (best-of-{runs} ratio adapter / bare = {best['adapter'] / best['bare']:.2f}x; "
        "the machine's load moves medians)"
    )
