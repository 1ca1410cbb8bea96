"""What each package ships, by name, for ``pi list``: skills, prompt templates (``/name``) and
themes, as the loaded plugins' ``register_resources`` and the ``packages`` settings give them."""

from __future__ import annotations

import os
from typing import Any

from pi_host.lib import resources
from pi_packages.pip_runner import normalise


def provided(cwd: str, trusted: bool) -> dict[str, dict[str, Any]]:
    """``{normalised package name: {"name", "resources": {kind: [names]}}}``, in load order."""
    from pi_host.config import paths
    from pi_host.plugins.selection import last_loaded

    found: dict[str, dict[str, Any]] = {}
    for kind in resources.KINDS:
        for item in resources.package_resources(kind, last_loaded(), paths.agent_dir(), cwd, trusted):
            package = found.setdefault(normalise(item.package), {"name": item.package, "resources": {}})
            names = package["resources"].setdefault(kind, [])
            names += [n for n in resource_names(kind, item.path) if n not in names]
    return found


def resource_names(kind: str, path: str) -> list[str]:
    """The names a file or folder of ``kind`` gives, as commands and settings use them."""
    names = []
    for file in resources.resource_files(kind, [path]):
        stem = os.path.splitext(os.path.basename(file))[0]
        if kind == "prompts":
            names.append(f"/{stem}")
        elif kind == "themes":
            names.append(_theme_name(file) or stem)
        else:
            names.append(
                _skill_name(file) or (os.path.basename(os.path.dirname(file)) if stem == "SKILL" else stem)
            )
    return names


def _skill_name(path: str) -> str | None:
    try:
        from pi_host.lib.frontmatter import read_frontmatter

        name = read_frontmatter(path).data.get("name")
    except Exception:  # an unreadable skill is discovery's to report, not pi list's
        return None
    return name.strip() if isinstance(name, str) and name.strip() else None


def _theme_name(path: str) -> str | None:
    from pi_host.config.json_files import read_json_object

    name = read_json_object(path)[0].get("name")
    return name.strip() if isinstance(name, str) and name.strip() else None
