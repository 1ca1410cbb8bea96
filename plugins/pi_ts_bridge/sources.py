"""Where pi's packages installed for pi-host live (``pi install npm:...``, plugins/pi_packages/npm.py
installs them): ``<agent dir>/pi-host/npm/node_modules/<name>``, recorded in the scope's
``pi-host-packages.json`` with ``"kind": "npm"``. The manifest's format is documented
(docs/packages.md), so the bridge reads it itself."""

from __future__ import annotations

import json
import os


def npm_prefix() -> str:
    from pi_host.config.paths import agent_dir

    return os.path.join(agent_dir(), "pi-host", "npm")


def recorded_npm_packages(manifest: str, problems: list[str]) -> list[str]:
    """The installed folders of the npm packages ``manifest`` records (a recorded package that is
    missing is one line in ``problems``)."""
    try:
        with open(manifest, encoding="utf-8") as handle:
            entries = json.load(handle).get("packages") or []
    except (OSError, ValueError, AttributeError):
        return []
    found = []
    for entry in entries:
        if (
            not isinstance(entry, dict)
            or entry.get("kind") != "npm"
            or not isinstance(entry.get("name"), str)
        ):
            continue
        folder = os.path.join(npm_prefix(), "node_modules", *entry["name"].split("/"))
        if os.path.isdir(folder):
            found.append(folder)
        else:
            problems.append(
                f"{manifest}: npm package {entry['name']} is not installed: run 'pi install --sync'"
            )
    return found
