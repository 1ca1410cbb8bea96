"""The lists of installed plugin packages: ``<agent dir>/pi-host-packages.json`` (user scope) and
``<project>/.pi/pi-host-packages.json`` (project scope, ``-l``).

The file is a JSON object ``{"packages": [entry, ...]}``; each entry records what the user asked
for and what it installed::

    {"spec": "/abs/path/pi-guard", "name": "pi-guard", "version": "0.1.0",
     "editable": false, "installedAt": "2025-01-01T12:00:00Z"}

``spec`` is the requirement, absolute path or git URL given to ``pi install``; ``name`` and
``version`` the distribution pip installed for it. pi's npm packages (``pi install npm:...``)
have ``"kind": "npm"`` and the npm package's name. Other keys are kept when the file is rewritten.
Reading this module costs nothing at start-up: only :func:`read_entries` runs there.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

FILE_NAME = "pi-host-packages.json"
SCOPES = ("user", "project")


def normalise(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def manifest_path(scope: str, cwd: str | None = None) -> str:
    if scope == "project":
        return os.path.join(cwd or os.getcwd(), ".pi", FILE_NAME)
    from pi_host.config.paths import agent_dir

    return os.path.join(agent_dir(), FILE_NAME)


def read_entries(path: str, include_npm: bool = False) -> list[dict[str, Any]]:
    """The entries of one manifest (none when it is missing or unreadable): its Python packages,
    and with ``include_npm`` pi's npm packages too."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return []
    packages = data.get("packages") if isinstance(data, dict) else None
    return [
        e
        for e in packages or ()
        if isinstance(e, dict) and isinstance(e.get("name"), str) and (include_npm or e.get("kind") != "npm")
    ]


def find(entries: list[dict[str, Any]], key: str) -> dict[str, Any] | None:
    """The entry named ``key`` (a distribution name, any spelling) or installed from spec ``key``."""
    wanted = normalise(key)
    absolute = os.path.abspath(os.path.expanduser(key))
    for entry in entries:
        if normalise(entry["name"]) == wanted or entry.get("spec") in (key, absolute):
            return entry
    return None


def record(
    path: str, spec: str, name: str, version: str, editable: bool = False, kind: str | None = None
) -> None:
    """Add or replace the entry for distribution ``name`` (``kind="npm"``: one of pi's npm
    packages, :mod:`pi_packages.npm`)."""
    from pi_host.config.json_files import update_json_file

    def change(data: dict[str, Any]) -> None:
        packages = [
            e
            for e in data.get("packages") or ()
            if not (isinstance(e, dict) and normalise(str(e.get("name", ""))) == normalise(name))
        ]
        entry = {
            "spec": spec,
            "name": name,
            "version": version,
            "editable": editable,
            "installedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        packages.append({**entry, "kind": kind} if kind else entry)
        data["packages"] = sorted(packages, key=lambda e: normalise(str(e.get("name", ""))))

    os.makedirs(os.path.dirname(path), exist_ok=True)
    update_json_file(path, change)


def forget(path: str, name: str) -> bool:
    """Remove distribution ``name``'s entry; whether there was one."""
    if not os.path.exists(path):
        return False
    from pi_host.config.json_files import update_json_file

    found: list[bool] = []

    def change(data: dict[str, Any]) -> None:
        kept = []
        for e in data.get("packages") or ():
            if isinstance(e, dict) and normalise(str(e.get("name", ""))) == normalise(name):
                found.append(True)
            else:
                kept.append(e)
        data["packages"] = kept

    update_json_file(path, change)
    return bool(found)
