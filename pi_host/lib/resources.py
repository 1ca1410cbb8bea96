"""What file-based context resources (skills, prompt templates) have in common (reference §8.4-§8.7).

Plugins must not import each other, so the pieces the skills and prompt-template sources share
live here, in the host:

* where projects keep them: :func:`walk_up`, :func:`git_root`, :func:`agents_skill_dirs` (also
  what project trust protects);
* how settings entries and flags name them: :func:`absolute_path`,
  :func:`parse_setting_entries`, :func:`string_list`, and :class:`ResourceLocations`, the common
  part of "where to look" (paths from ``resources_discover`` handlers come from
  ``ctx.discovered_paths``);
* how a command reports where it came from: :func:`source_info`;
* per-session state: :class:`PerSession` (discovered once per session, again after a reload;
  :func:`pi_host.lib.lazy.forget_on_reload` is the hook that triggers it).

Everything here is cheap to import (no YAML, no pydantic): sources import it lazily anyway.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

# Re-exported: the sources find their files with these.
from pi_host.config.paths import absolute_path, agents_skill_dirs, git_root, walk_up  # noqa: F401

T = TypeVar("T")

SCOPES = {
    "user": "user",
    "project": "project",
    "settings": "user",
    "cli": "temporary",
    "extension": "temporary",
}
"""A resource's ``source`` (which location found it) → the ``scope`` commands report."""


def _expand_entry(entry: str, base: str) -> list[str]:
    """A settings entry as paths: globs (``skills/*``) expand, sorted; plain paths stay."""
    path = absolute_path(entry, base)
    if any(ch in entry for ch in "*?["):
        import glob

        return sorted(glob.glob(path))
    return [path]


@dataclass
class SettingEntries:
    """A resource list setting (``skills``, ``prompts``) taken apart."""

    paths: list[str] = field(default_factory=list)
    """Paths to load, in order (``+path`` and plain entries; globs expanded)."""
    excluded_paths: set[str] = field(default_factory=set)
    """``-path`` entries, absolute."""
    excluded_globs: list[str] = field(default_factory=list)
    """``!pattern`` entries, as written (without the ``!``)."""


def parse_setting_entries(entries: Iterable[Any], base: str) -> SettingEntries:
    """Take a resource list setting apart; entries that are not non-empty strings are ignored.
    Relative paths resolve against ``base`` (the working directory)."""
    parsed = SettingEntries()
    for entry in entries:
        if not isinstance(entry, str) or not entry:
            continue
        if entry.startswith("!"):
            parsed.excluded_globs.append(entry[1:])
        elif entry.startswith("-"):
            parsed.excluded_paths.add(absolute_path(entry[1:], base))
        else:
            parsed.paths.extend(_expand_entry(entry.lstrip("+"), base))
    return parsed


def string_list(value: Any) -> list[str]:
    """A flag or setting value as a list of strings (None → empty, a string → one item)."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else [str(v) for v in value]


@dataclass
class ResourceLocations:
    """Where a resource kind is looked for; the order of the fields is the precedence order."""

    agent_dir: str
    cwd: str
    trusted: bool = True
    """False: the project's own locations (``.pi/...``) are skipped (project trust, §8.7)."""
    include_defaults: bool = True
    """False with ``--no-skills`` / ``--no-prompt-templates``: only ``cli_paths`` load."""
    settings_entries: list[Any] = field(default_factory=list)
    cli_paths: list[str] = field(default_factory=list)
    extension_paths: list[str] = field(default_factory=list)

    @classmethod
    def for_session(
        cls,
        ctx: Any,
        *,
        setting: str,
        cli_flag: str,
        disabled: bool,
        extension_paths: list[str],
        **extra: Any,
    ) -> Any:
        """The locations a session's flags and settings name: the list setting ``setting``, the
        repeatable flag ``cli_flag`` and the project trust decision."""
        entries = (ctx.settings or {}).get(setting)
        return cls(
            agent_dir=_agent_dir(),
            cwd=ctx.cwd,
            trusted=ctx.is_project_trusted(),
            include_defaults=not disabled,
            settings_entries=list(entries) if isinstance(entries, list) else [],
            cli_paths=string_list(ctx.get_flag(cli_flag)),
            extension_paths=extension_paths,
            **extra,
        )


def _agent_dir() -> str:
    from pi_host.config import paths

    return paths.agent_dir()


class PerSession(Generic[T]):
    """One value per session (a discovery), kept until the session's reload forgets it.
    Sessions are held weakly."""

    def __init__(self) -> None:
        self._values: weakref.WeakKeyDictionary[Any, T] = weakref.WeakKeyDictionary()

    def get(self, session: Any) -> T | None:
        return self._values.get(session)

    def put(self, session: Any, value: T) -> T:
        self._values[session] = value
        return value

    def forget(self, session: Any) -> None:
        self._values.pop(session, None)


def source_info(path: str, source: str, *, cwd: str | None = None, **extra: Any) -> dict[str, Any]:
    """A command's ``sourceInfo`` for a resource file found by location ``source``, as pi reports
    it: a resource found by looking in the agent dir or the project's ``.pi`` is ``auto`` with
    that directory as ``baseDir``; one a settings entry names is ``local``."""
    from pi_host.config.paths import agent_dir

    info: dict[str, Any] = {
        "path": path,
        "source": "auto" if source in ("user", "project") else "local",
        "scope": SCOPES.get(source, "user"),
        "origin": "top-level",
    }
    if source == "user":
        info["baseDir"] = agent_dir()
    elif source == "project" and cwd:
        info["baseDir"] = os.path.join(cwd, ".pi")
    info.update(extra)
    return info


def print_warnings(warnings: Iterable[str]) -> None:
    """Discovery warnings, one ``Warning:`` line each on stderr."""
    import sys

    for warning in warnings:
        print(f"Warning: {warning}", file=sys.stderr)
