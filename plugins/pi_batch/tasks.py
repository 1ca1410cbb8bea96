"""Reading ``tasks.jsonl``: one JSON object a line. A bad line (not JSON or nested too deeply, not
an object, no usable ``id`` or ``prompt``, a repeated ``id``) is reported with its number and
skipped; an unknown field is reported and ignored; every other task still runs."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

FIELDS = ("id", "prompt", "cwd", "repo", "ref", "model", "tools", "settings", "env")
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


@dataclass
class Task:
    id: str
    prompt: str
    line: int = 0
    cwd: str | None = None
    repo: str | None = None
    ref: str | None = None
    model: str | None = None
    tools: list[str] | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in ("line", *FIELDS)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Task:
        return cls(**data)


class BadTask(ValueError):
    pass


def _string(data: dict[str, Any], name: str) -> str | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise BadTask(f"{name!r} must be a non-empty string")
    return value


def parse_task(data: Any, line: int) -> tuple[Task, list[str]]:
    """The task of one decoded line and the warnings about it; :class:`BadTask` if it cannot run."""
    if not isinstance(data, dict):
        raise BadTask("not a JSON object")
    raw_id = data.get("id")
    if isinstance(raw_id, int) and not isinstance(raw_id, bool):
        raw_id = str(raw_id)
    if not isinstance(raw_id, str) or not ID_PATTERN.fullmatch(raw_id):
        raise BadTask("'id' must be a string of letters, digits, '.', '_' or '-' (it names files)")
    prompt = data.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise BadTask("'prompt' must be a non-empty string")
    if data.get("cwd") is not None and data.get("repo") is not None:
        raise BadTask("give 'cwd' or 'repo', not both")
    if data.get("ref") is not None and data.get("repo") is None:
        raise BadTask("'ref' needs a 'repo'")
    tools = data.get("tools")
    if isinstance(tools, str):
        tools = [name.strip() for name in tools.split(",") if name.strip()]
    if tools is not None and (not isinstance(tools, list) or not all(isinstance(t, str) for t in tools)):
        raise BadTask("'tools' must be a list of names or a comma list")
    settings = data.get("settings") or {}
    if not isinstance(settings, dict):
        raise BadTask("'settings' must be an object")
    env = data.get("env") or {}
    if not isinstance(env, dict) or not all(isinstance(k, str) for k in env):
        raise BadTask("'env' must be an object")
    if any(v is not None and not isinstance(v, str | int | float | bool) for v in env.values()):
        raise BadTask("'env' values must be strings")
    task = Task(
        id=raw_id,
        prompt=prompt,
        line=line,
        cwd=_string(data, "cwd"),
        repo=_string(data, "repo"),
        ref=_string(data, "ref"),
        model=_string(data, "model"),
        tools=tools,
        settings=settings,
        env={k: "" if v is None else str(v) for k, v in env.items()},
    )
    warnings = [f"unknown field {name!r} ignored" for name in data if name not in FIELDS]
    return task, warnings


def read_tasks(path: str) -> tuple[list[Task], list[str]]:
    """The runnable tasks of ``path`` in file order and the problems, each ``<path>:<line>: ...``."""
    tasks: list[Task] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, text in enumerate(handle, 1):
            if not text.strip():
                continue
            try:
                task, warnings = parse_task(json.loads(text), number)
            except ValueError as exc:  # JSONDecodeError and BadTask
                reason = str(exc) if isinstance(exc, BadTask) else f"not JSON ({exc})"
                problems.append(f"{path}:{number}: {reason}; line skipped")
                continue
            except RecursionError:  # deeper than the parser's stack: a bad line, not a crash
                problems.append(f"{path}:{number}: not JSON (nested too deeply); line skipped")
                continue
            problems.extend(f"{path}:{number}: {warning}" for warning in warnings)
            if task.id in seen:
                problems.append(
                    f"{path}:{number}: id {task.id!r} already used on line {seen[task.id]}; skipped"
                )
                continue
            seen[task.id] = number
            tasks.append(task)
    return tasks, problems
