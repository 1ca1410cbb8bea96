"""``pi plugins``: every plugin, where it came from, what it hooks, what it cost to import."""

from __future__ import annotations

import json
import os
import sys

from pi_host.config.paths import agent_dir
from pi_host.plugins.dispatch import PluginHost
from pi_host.plugins.loading import LoadOptions, disabled_from_env, load_plugins


def collect_records(argv: list[str]) -> tuple[PluginHost, list[str]]:
    extension_paths: list[str] = []
    index = 0
    while index < len(argv):
        if argv[index] in ("-e", "--extension") and index + 1 < len(argv):
            extension_paths.append(argv[index + 1])
            index += 2
        else:
            index += 1
    cwd = os.getcwd()
    disabled = set(disabled_from_env()) | _disabled_in_settings(cwd)
    host = PluginHost()
    errors: list[str] = []
    host.on_error(lambda e: errors.append(f"plugin {e['plugin']!r} failed in {e['event']}: {e['error']}"))
    load_plugins(
        host,
        LoadOptions(
            cwd=cwd,
            extension_paths=tuple(extension_paths),
            disabled=frozenset(disabled),
            builtins_only=os.environ.get("PI_HOST_NO_PLUGINS", "") not in ("", "0"),
        ),
    )
    return host, errors


def _disabled_in_settings(cwd: str) -> set[str]:
    """``disabledPlugins`` from both settings files, read as plain JSON (no validation needed)."""
    names: set[str] = set()
    for path in (os.path.join(agent_dir(), "settings.json"), os.path.join(cwd, ".pi", "settings.json")):
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("disabledPlugins"), list):
            names.update(str(n) for n in data["disabledPlugins"])
    return names


def run_plugins_command(argv: list[str]) -> int:
    if "-h" in argv or "--help" in argv:
        sys.stdout.write(
            "Usage: pi plugins [--json] [-e PATH]...\n\n"
            "List every plugin: name, version, source, origin, hooks, import time and failure.\n"
        )
        return 0
    host, _errors = collect_records(argv)
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
            for r in host.records
        ]
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return 0
    out = []
    for r in host.records:
        status = "disabled" if r.disabled else ("FAILED" if r.error else "ok")
        out.append(f"{r.name} {r.version or '-'}  [{r.source}] {status}  {r.import_ms:.1f} ms")
        out.append(f"    from: {r.origin}")
        if r.hooks:
            out.append(f"    hooks: {', '.join(r.hooks)}")
        if r.error:
            out.append(f"    error: {r.error}")
    total = sum(r.import_ms for r in host.records)
    out.append(f"{len(host.records)} plugins, {total:.1f} ms importing")
    sys.stdout.write("\n".join(out) + "\n")
    return 0
