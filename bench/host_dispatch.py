"""Cost of dispatching one event through 10 handlers (median of repeated batches).

Compares the host's ordered dispatcher (sync and async handlers) with a bare Python loop calling
the same 10 functions, measured in the same process.

    .venv/bin/python bench/host_dispatch.py
"""

from __future__ import annotations

import asyncio
import statistics
import time

from pi_host import hookimpl
from pi_host.plugins.dispatch import PluginHost, PluginRecord

HANDLERS = 10
BATCH = 20000
REPEATS = 7


def make_plugin(index: int, is_async: bool):
    class Plugin:
        if is_async:

            @hookimpl
            async def on_message_update(self, event, ctx):
                return None

        else:

            @hookimpl
            def on_message_update(self, event, ctx):
                return None

    plugin = Plugin()
    plugin.name = f"p{index}"
    return plugin


async def per_event_us(host: PluginHost) -> float:
    event = {"type": "message_update"}
    samples = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        for _ in range(BATCH):
            await host.dispatch("message_update", event, None)
        samples.append((time.perf_counter() - started) / BATCH * 1e6)
    return statistics.median(samples)


def bare_loop_us() -> float:
    functions = [lambda event, ctx: None for _ in range(HANDLERS)]
    event = {"type": "message_update"}
    samples = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        for _ in range(BATCH):
            for function in functions:
                function(event, None)
        samples.append((time.perf_counter() - started) / BATCH * 1e6)
    return statistics.median(samples)


async def main() -> None:
    results = {}
    for label, is_async in (("sync handlers", False), ("async handlers", True)):
        host = PluginHost()
        for index in range(HANDLERS):
            plugin = make_plugin(index, is_async)
            host.register(plugin, PluginRecord(name=plugin.name, source="bench"))
        results[label] = await per_event_us(host)
    empty = PluginHost()
    results["no handlers"] = await per_event_us(empty)
    baseline = bare_loop_us()
    print(f"dispatch of one event through {HANDLERS} handlers (median of {REPEATS} x {BATCH})")
    print(f"  bare loop of 10 calls (baseline)  {baseline:6.2f} us")
    for label, value in results.items():
        print(f"  {label:32s}  {value:6.2f} us   {value / baseline:5.2f}x baseline")
    worst = max(results["sync handlers"], results["async handlers"])
    print(f"  target: under 10 us -> {'OK' if worst < 10 else 'MISSED'}")


if __name__ == "__main__":
    asyncio.run(main())
