"""A hook's time limit cuts the await it was set for, never what the task awaits next: when the
await ends between the watchdog's look and the loop running the cut (a busy loop; a TypeScript
bridge stopped at the same moment answers every call at once), nothing is cancelled. Before the
fix, the late cancel hit the run itself and the turn's answer was lost."""

from __future__ import annotations

import asyncio
import time

import pytest

from pi_host.plugins.dispatch import PluginHost, PluginRecord, hookimpl

LIMIT_S = 0.2


class _SlowButFinishing:
    @hookimpl
    async def on_turn_end(self, event, ctx):
        await asyncio.sleep(0.01)  # the await is in flight: the watchdog knows its start
        time.sleep(LIMIT_S + 0.35)  # the loop is busy past the limit: the watchdog schedules a cut
        return None  # ...and the await ends before the loop can run it


@pytest.mark.asyncio
async def test_a_cut_scheduled_for_an_await_that_ended_cancels_nothing():
    host = PluginHost(hook_timeout_ms=int(LIMIT_S * 1000))
    host.register(_SlowButFinishing(), PluginRecord(name="slow", source="builtin"))
    failures: list[dict] = []
    host.on_error(failures.append)
    await host.dispatch("turn_end", {"type": "turn_end"}, None)
    await asyncio.sleep(0.3)  # the run goes on: a stale cut would be delivered here
    assert failures == []
    assert host.clock.expired == set()
