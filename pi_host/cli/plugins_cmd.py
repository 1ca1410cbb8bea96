"""``pi plugins``: every plugin, where it came from, what it hooks, what it cost to import, and
why it did not load (failed, disabled, or skipped in an untrusted project)."""

from __future__ import annotations

import json
import sys

from pi_host.plugins.dispatch import SOURCE_ORDER, PluginHost, PluginRecord

USAGE = (
    "Usage: pi [-a|-na] [-e PATH]... plugins [--json]\n\n"
    "List every plugin: name, version, source, origin, hooks, import time and failure.\n"
)


def ordered(records: list[PluginRecord]) -> list[PluginRecord]:
    """In load order: by source, then as found."""
    rank = {source: index for index, source in enumerate(SOURCE_ORDER)}
    return sorted(records, key=lambda r: rank.get(r.source, len(rank)))


def run_plugins_command(host: PluginHost, argv: list[str]) -> int:
    if "-h" in argv or "--help" in argv:
        sys.stdout.write(USAGE)
        return 0
    records = ordered(host.records)
    if "--json" in argv:
        rows = [
            {
                "name": r.name,
                "version": r.version,
                "source": r.source,
                "origin": r.origin,
                "hooks": r.hooks,
                "importMs": round(r.import_ms, 2),
                "error": r.error,
                "disabled": r.disabled,
            }
            for r in records
        ]
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return 0
    out = []
    for r in records:
        status = "disabled" if r.disabled else ("FAILED" if r.error else "ok")
        out.append(f"{r.name} {r.version or '-'}  [{r.source}] {status}  {r.import_ms:.1f} ms")
        out.append(f"    from: {r.origin}")
        if r.hooks:
            out.append(f"    hooks: {', '.join(r.hooks)}")
        if r.error:
            out.append(f"    {'note' if r.disabled else 'error'}: {r.error}")
    total = sum(r.import_ms for r in records)
    out.append(f"{len(records)} plugins, {total:.1f} ms importing")
    sys.stdout.write("\n".join(out) + "\n")
    return 0
