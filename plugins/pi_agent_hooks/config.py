"""Finding and reading the hook files of Claude Code and Codex.

User files always count; a project's only once the user trusted it by a decision (``-a``, a saved
``/trust``, or trust given to its ``.pi`` resources): a repository's hook file is code that runs on
your machine, and a project without ``.pi`` resources counts as trusted without anyone deciding.

===============================  ==========================================
Claude Code                      ``~/.claude/settings.json``, ``.claude/settings.json``,
                                 ``.claude/settings.local.json``
Codex                            ``~/.codex/hooks.json``, ``.codex/hooks.json``, the ``[hooks]``
                                 tables of ``~/.codex/config.toml`` and ``.codex/config.toml``
===============================  ==========================================

Each has ``{"hooks": {"<Event>": [{"matcher": "...", "hooks": [{"type": "command", "command":
"...", "timeout": 60}]}]}}``. ``"disableAllHooks": true`` in a Claude Code file turns that file's
hooks off. Event names in snake case (``pre_tool_use``) and ``timeout_ms`` are accepted too.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any

EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "Stop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "PostCompact",
    "Notification",
    "SubagentStop",
    "PermissionRequest",
)
_SNAKE = {re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower(): name for name in EVENTS}
DEFAULT_TIMEOUT = 60.0
UNMATCHED = ("UserPromptSubmit", "Stop", "SubagentStop")
"""Events whose hooks all run whatever their matcher says (as in Claude Code)."""


@dataclass(frozen=True)
class Hook:
    command: str
    timeout: float
    source: str
    """The file it came from (named in failure lines)."""


@dataclass
class Group:
    matcher: str
    hooks: list[Hook]

    def matches(self, candidates: list[str]) -> bool:
        if self.matcher in ("", "*"):
            return True
        try:
            pattern = re.compile(self.matcher)
        except re.error:
            return self.matcher in candidates
        return any(pattern.fullmatch(name) for name in candidates)


@dataclass
class HookConfig:
    events: dict[str, list[Group]] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def matching(self, event: str, candidates: list[str]) -> list[Hook]:
        """The hooks for ``event`` whose matcher takes one of ``candidates`` (identical commands
        once: Claude Code runs a duplicated command once)."""
        found: dict[str, Hook] = {}
        for group in self.events.get(event, []):
            if event in UNMATCHED or group.matches(candidates):
                for hook in group.hooks:
                    found.setdefault(hook.command, hook)
        return list(found.values())


def _read_json(path: str, problems: list[str]) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        problems.append(f"hooks: cannot read {path}: {exc}")
        return None
    return data if isinstance(data, dict) else None


def _read_toml(path: str, problems: list[str]) -> dict[str, Any] | None:
    if not os.path.exists(path):
        return None
    import tomllib

    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        problems.append(f"hooks: cannot read {path}: {exc}")
        return None


def _add(config: HookConfig, data: dict[str, Any] | None, path: str) -> None:
    if not data or data.get("disableAllHooks") is True:
        return
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return
    config.files.append(path)
    for raw_event, groups in hooks.items():
        event = _SNAKE.get(raw_event, raw_event)
        if event not in EVENTS:
            config.problems.append(f"hooks: {path}: unknown event {raw_event!r}; ignored")
            continue
        for group in groups if isinstance(groups, list) else []:
            if not isinstance(group, dict):
                continue
            entries = (
                group.get("hooks") if isinstance(group.get("hooks"), list) else [group]
            )  # Codex's flat form
            parsed = [_hook(entry, path, config.problems) for entry in entries]
            found = [hook for hook in parsed if hook is not None]
            if found:
                matcher = group.get("matcher")
                config.events.setdefault(event, []).append(
                    Group(matcher if isinstance(matcher, str) else "", found)
                )


def _hook(entry: Any, path: str, problems: list[str]) -> Hook | None:
    if not isinstance(entry, dict):
        return None
    if entry.get("type", "command") != "command":
        problems.append(
            f"hooks: {path}: hooks of type {entry.get('type')!r} are not supported (only command); skipped"
        )
        return None
    if not isinstance(entry.get("command"), str):
        return None
    timeout = entry.get("timeout")
    if isinstance(entry.get("timeout_ms"), int | float):
        timeout = entry["timeout_ms"] / 1000
    if not isinstance(timeout, int | float) or timeout <= 0:
        timeout = DEFAULT_TIMEOUT
    return Hook(entry["command"], float(timeout), path)


def project_trusted_by_decision(ctx: Any) -> bool:
    """The project's own hook files run only when the user decided to trust it."""
    if not ctx.is_project_trusted():
        return False
    from pi_host.config.trust import protected_resources, saved_decision

    if protected_resources(ctx.cwd):
        return True  # its .pi resources were trusted: a flag, a saved decision, the user's policy
    saved = saved_decision(ctx.cwd)
    if saved is not None and saved[0]:
        return True
    return any(arg in ("-a", "--approve") for arg in sys.argv[1:])


def load(ctx: Any, home: str) -> HookConfig:
    config = HookConfig()
    claude, codex = os.path.join(home, ".claude"), os.path.join(home, ".codex")
    files = [
        (os.path.join(claude, "settings.json"), "json"),
        (os.path.join(codex, "hooks.json"), "json"),
        (os.path.join(codex, "config.toml"), "toml"),
    ]
    if project_trusted_by_decision(ctx):
        cwd = ctx.cwd
        files += [
            (os.path.join(cwd, ".claude", "settings.json"), "json"),
            (os.path.join(cwd, ".claude", "settings.local.json"), "json"),
            (os.path.join(cwd, ".codex", "hooks.json"), "json"),
            (os.path.join(cwd, ".codex", "config.toml"), "toml"),
        ]
    for path, kind in files:
        reader = _read_json if kind == "json" else _read_toml
        _add(config, reader(path, config.problems), path)
    return config
