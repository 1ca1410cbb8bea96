"""Remembered answers.

* "always for this session": a ``custom`` entry ``pi-permissions`` in the session file
  (``{"allow": "bash(npm test)"}``), so the answer holds for the rest of the session and again when
  it is resumed (``pi -c``), and never reaches the model;
* "always for this project": ``<agent dir>/permissions.json``,
  ``{"projects": {"/real/path/of/project": {"allow": ["edit"]}}}``. It lives in the agent dir, not
  in the project, so the repository cannot grant itself permissions (and the sandbox keeps the
  agent dir read-only).
"""

from __future__ import annotations

import json
import os
from typing import Any

from pi_permissions.rules import Rule, parse

ENTRY = "pi-permissions"
FILE = "permissions.json"


def session_rules(ctx: Any) -> list[Rule]:
    found = []
    try:
        entries = ctx.get_custom_entries(ENTRY)
    except Exception:  # noqa: BLE001 (a session without a store)
        return []
    for data in entries or []:
        rule = parse(data.get("allow", "") if isinstance(data, dict) else "", "this session")
        if rule is not None:
            found.append(rule)
    return found


def remember_for_session(ctx: Any, rule: Rule) -> None:
    ctx.append_entry(ENTRY, {"allow": rule.text()})


def _path(agent_dir: str) -> str:
    return os.path.join(agent_dir, FILE)


def _load(agent_dir: str) -> dict[str, Any]:
    try:
        with open(_path(agent_dir), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def project_rules(agent_dir: str, cwd: str) -> list[Rule]:
    projects = _load(agent_dir).get("projects")
    entry = projects.get(os.path.realpath(cwd)) if isinstance(projects, dict) else None
    allow = entry.get("allow") if isinstance(entry, dict) else None
    return [r for r in (parse(v, "this project") for v in allow or [] if isinstance(v, str)) if r is not None]


def remember_for_project(agent_dir: str, cwd: str, rule: Rule) -> None:
    """Add ``rule`` to the project's list (written to a temporary file, then renamed)."""
    data = _load(agent_dir)
    projects = data.setdefault("projects", {})
    if not isinstance(projects, dict):
        projects = data["projects"] = {}
    entry = projects.setdefault(os.path.realpath(cwd), {})
    allow = entry.setdefault("allow", [])
    if rule.text() not in allow:
        allow.append(rule.text())
    import tempfile

    os.makedirs(agent_dir, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=".permissions-", dir=agent_dir)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2)
        handle.write("\n")
    os.replace(temp, _path(agent_dir))
