"""A stdio server starts while the MCP SDK imports, and pi-host's stdio transport then uses that
process: one process per server, none left behind when the run ends first (issue 18, start-up)."""

from __future__ import annotations

import sys


async def test_the_sdk_imports_with_a_short_switch_interval_which_is_restored_after(monkeypatch):
    import pi_mcp.client as client

    seen: list[float] = []
    monkeypatch.setattr(client, "_import_sdk", lambda: seen.append(sys.getswitchinterval()))
    monkeypatch.setattr(client, "_sdk", None)
    before = sys.getswitchinterval()
    await client.load_sdk()
    assert len(seen) == 1 and abs(seen[0] - client.IMPORT_SWITCH_INTERVAL_S) < 1e-6 < before - seen[0]
    assert sys.getswitchinterval() == before
