"""One loaded extension as pi-host knows it (below the runtime, so the modules the runtime uses
can name it without importing the runtime)."""

from __future__ import annotations

from typing import Any

from pi_host.plugins.dispatch import PluginRecord

BridgeRuntime = Any
"""``pi_ts_bridge.runtime.BridgeRuntime``: named, not imported (it imports this module)."""


class ExtensionLoadError(Exception):
    """An extension did not load (pi-host names it: ``plugin 'x' failed in load: ...``)."""


class Extension:
    """What pi-host knows of one loaded extension: its plugin record and registrations."""

    def __init__(self, runtime: BridgeRuntime, record: PluginRecord, snapshot: dict[str, Any]) -> None:
        self.runtime = runtime
        self.record = record
        self.name = record.name
        self.snapshot = snapshot
        self.tools: dict[str, dict[str, Any]] = {t["name"]: t for t in snapshot.get("tools", [])}
        self.commands: dict[str, dict[str, Any]] = {c["name"]: c for c in snapshot.get("commands", [])}
        self.plugin: Any = None
        self.noted: set[str] = set()
        self.dead_reported = False
