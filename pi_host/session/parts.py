"""What a session's plugins registered for it: tools, commands and context sources, each
remembered with the plugin it came from (so a failure names that plugin), and which tools are
active at the start."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pi_host.config.defaults import DEFAULTS
from pi_host.loop.tools import Tool, ToolContext
from pi_host.loop.validation import schema_problem
from pi_host.plugins.dispatch import PluginHost
from pi_host.plugins.registrations import Command, ContextSource


@dataclass
class SessionParts:
    tools: dict[str, Tool] = field(default_factory=dict)
    builtin_tools: set[str] = field(default_factory=set)
    commands: dict[str, Command] = field(default_factory=dict)
    context_sources: list[ContextSource] = field(default_factory=list)
    """In ascending ``order``, then load order."""
    owners: dict[int, str] = field(default_factory=dict)
    """``id(item)`` -> the name of the plugin that registered it."""


def registered_parts(host: PluginHost, tool_context: ToolContext) -> SessionParts:
    parts = SessionParts()
    for plugin, tool in host.collect_named("register_tools", ctx=tool_context):
        if isinstance(tool, Tool) or hasattr(tool, "execute"):
            problem = schema_problem(getattr(tool, "parameters", None))
            if problem is not None:  # would fail every call (and the run): drop the tool now
                host.report(plugin, "register_tools", f"tool {tool.name!r}: {problem}; not registered")
                continue
            parts.tools[tool.name] = tool  # a later tool of the same name replaces the earlier
            record = host.record(plugin)
            if record is not None and record.source == "builtin":
                parts.builtin_tools.add(tool.name)
            else:
                parts.builtin_tools.discard(tool.name)
    for plugin, command in host.collect_named("register_commands"):
        if isinstance(command, Command):
            name, index = command.name, 1
            while name in parts.commands:  # duplicates get :1, :2 in load order, as pi
                name, index = f"{command.name}:{index}", index + 1
            parts.commands[name] = command
            parts.owners[id(command)] = plugin
    sources = [
        (p, s) for p, s in host.collect_named("register_context_sources") if isinstance(s, ContextSource)
    ]
    parts.owners.update((id(s), p) for p, s in sources)
    parts.context_sources = sorted((s for _, s in sources), key=lambda s: s.order)
    return parts


@dataclass(frozen=True)
class ToolSelection:
    """The command line's choice of tools, applied when a session is built (so ``session_start``
    already sees it): ``--tools`` (names or ``*``/``?`` globs; all ``+name``/``-name`` entries
    edit the default set instead of replacing it), ``--exclude-tools``, ``--no-builtin-tools``."""

    tools: str | None = None
    exclude: str | None = None
    no_builtin: bool = False


def select_tools(parts: SessionParts, config: Any, warn: Any = None) -> dict[str, Tool]:
    """``tools`` exactly when given; else the ``defaultTools`` setting (pi's four by default) in
    its order, then every other plugin's tool unless it says ``default_active = False``; then the
    command line's :class:`ToolSelection`."""
    if config.no_tools:
        return {}
    if config.tools is not None:
        chosen = {name: parts.tools[name] for name in config.tools if name in parts.tools}
    else:
        default = config.settings.get("defaultTools")
        names = [str(n) for n in default] if isinstance(default, list) else list(DEFAULTS["defaultTools"])
        chosen = {name: parts.tools[name] for name in names if name in parts.tools}
        for name, tool in parts.tools.items():
            if (
                name not in parts.builtin_tools
                and name not in chosen
                and getattr(tool, "default_active", True)
            ):
                chosen[name] = tool
    selection = getattr(config, "tool_selection", None)
    return chosen if selection is None else _apply(selection, chosen, parts, warn)


def _apply(
    selection: ToolSelection, active: dict[str, Tool], parts: SessionParts, warn: Any
) -> dict[str, Tool]:
    available = parts.tools
    if selection.tools is not None:
        entries = [t.strip() for t in selection.tools.split(",") if t.strip()]
        if entries and all(n[0] in "+-" for n in entries):
            active = dict(active)
            for item in entries:
                for name in _matching(item[1:], available):
                    if item[0] == "+":
                        active[name] = available[name]
                    else:
                        active.pop(name, None)
        else:
            active = {}
            for entry in entries:
                found = _matching(entry, available)
                if not found and warn is not None:
                    warn(f"unknown tool {entry!r} (available: {', '.join(sorted(available))})")
                active.update((name, available[name]) for name in found)
    if selection.exclude:
        for entry in selection.exclude.split(","):
            for name in _matching(entry.strip(), list(active)):
                active.pop(name, None)
    if selection.no_builtin:
        active = {n: t for n, t in active.items() if n not in parts.builtin_tools}
    return active


def _matching(pattern: str, names: Any) -> list[str]:
    """Tool names a ``--tools`` / ``--exclude-tools`` entry names: itself, or a ``*``/``?`` glob."""
    if any(char in pattern for char in "*?["):
        import fnmatch

        return [name for name in names if fnmatch.fnmatchcase(name, pattern)]
    return [pattern] if pattern in names else []
