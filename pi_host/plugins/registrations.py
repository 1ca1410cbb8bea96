"""The things registration hooks return. Plain dataclasses: importing this module is cheap."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ProviderApi:
    """An implementation of one wire API (``stream`` follows ``pi_host.protocol.StreamFn``)."""

    api: str
    stream: Callable[..., Any]


@dataclass
class ProviderInfo:
    """A provider and its models for the catalog.

    ``models`` holds dicts in models.json's model shape (``id``, ``name``, ``contextWindow``...).
    ``env_keys`` are the environment variables tried for its key, in order.
    """

    id: str
    api: str = ""
    base_url: str = ""
    env_keys: list[str] = field(default_factory=list)
    models: list[dict[str, Any]] = field(default_factory=list)
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None
    needs_key: bool = True
    """False for providers that work without credentials (faux, some local servers)."""


@dataclass
class Command:
    """A slash command. ``handler(args: str, ctx)`` may be async; its return is ignored."""

    name: str
    handler: Callable[[str, Any], Any]
    description: str = ""
    source: str = "extension"


@dataclass
class CliFlag:
    """A long flag (``--name``) a plugin adds to the CLI."""

    name: str
    description: str = ""
    type: str = "boolean"
    """``boolean``, ``string`` or ``list`` (repeatable string)."""
    default: Any = None
    aliases: list[str] = field(default_factory=list)
    """Other spellings, e.g. ``["-nc"]``."""


@dataclass
class ContextSource:
    """A source of context.

    ``sections(ctx)`` returns named system-prompt sections (``{name: text or None}``) merged in
    load order (a later source replaces a section of the same name; ``None`` removes it).
    ``expand_input(text, ctx)`` may rewrite user input (skills, prompt templates) and returns the
    new text or None. Either may be async.
    """

    name: str
    sections: Callable[[Any], Any] | None = None
    expand_input: Callable[[str, Any], Any] | None = None
    order: int = 100
    """Sources run in ascending order, then load order."""
    commands: Callable[[Any], Any] | None = None
    """``commands(ctx)`` (may be async) lists the slash commands this source expands, for
    completion and RPC ``get_commands``: dicts ``{name, description, source: "prompt"|"skill",
    sourceInfo: {path, source, scope, origin, baseDir?}}``."""


@dataclass
class CompactionStrategy:
    """Writes summaries. ``summarize(preparation, ctx)`` returns ``{summary, details?, usage?}``;
    ``summarize_branch(preparation, ctx)`` likewise for branch summaries (optional)."""

    name: str
    summarize: Callable[[Any, Any], Awaitable[Any]]
    summarize_branch: Callable[[Any, Any], Awaitable[Any]] | None = None


@dataclass
class Mode:
    """A run mode. ``run(app)`` receives the CLI's :class:`pi_host.cli.run.RunRequest` and returns
    the process exit code (may be async)."""

    name: str
    run: Callable[[Any], Any]
    description: str = ""


@dataclass
class SessionStoreFactory:
    """Opens session stores. ``open(options)`` returns a :class:`pi_host.lib.sessions.store.SessionStore`."""

    name: str
    open: Callable[[Any], Any]
    list_sessions: Callable[..., list[Any]] | None = None
    """Optional ``list_sessions(cwd, agent_dir, session_dir=None, all_dirs=False)``: session
    summaries (``.to_json()`` gives pi's ``SessionInfo`` fields), newest first."""


@dataclass
class Subcommand:
    """``pi <name> [args...]``: ``run(argv)`` returns an exit code."""

    name: str
    run: Callable[[list[str]], int]
    description: str = ""
