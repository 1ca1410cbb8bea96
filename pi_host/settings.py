"""Reading settings.json (global, then project) into one merged dict (reference §8.6).

Objects merge recursively, the project wins; arrays and scalars replace.
"""

from __future__ import annotations

import json
import os
from typing import Any

from pi_host import paths


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def read_json_object(path: str) -> tuple[dict[str, Any], str | None]:
    """The object in ``path`` (empty when missing) and an error line when it is unreadable."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return {}, None
    except (OSError, ValueError) as exc:
        return {}, f"{path}: {exc}"
    if not isinstance(data, dict):
        return {}, f"{path}: expected a JSON object"
    return data, None


def load_settings(cwd: str, project_trusted: bool = True) -> tuple[dict[str, Any], list[str]]:
    """Merged settings and any problems found (files are never rewritten here)."""
    problems: list[str] = []
    user, error = read_json_object(os.path.join(paths.agent_dir(), "settings.json"))
    if error:
        problems.append(error)
    project: dict[str, Any] = {}
    if project_trusted:
        project, error = read_json_object(os.path.join(cwd, ".pi", "settings.json"))
        if error:
            problems.append(error)
    return deep_merge(user, project), problems


def get(settings: dict[str, Any], dotted: str, default: Any = None) -> Any:
    node: Any = settings
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node
