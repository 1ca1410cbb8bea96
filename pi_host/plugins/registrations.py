"""The things registration hooks return. Plain dataclasses: importing this module is cheap.

``ProviderApi`` and ``ProviderInfo`` belong to the model catalog (:mod:`pi_host.config.models`)
and are re-exported here with the rest."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pi_host.config.models import ProviderApi, ProviderInfo

__all__ = [
    "CliFlag",
    "Command",
    "CompactionStrategy",
    "ContextSource",
    "Mode",
    "FooterRenderer",
    "MessageRenderer",
    "ProviderApi",
    "ProviderInfo",
    "Resources",
    "SessionStoreFactory",
    "Shortcut",
    "Subcommand",
    "ToolRenderer",
]


@dataclass
class Command:
    """A slash command. ``handler(args: str, ctx)`` may be async; its return is ignored."""

    name: str
    handler: Callable[[str, Any], Any]
    description: str = ""
    source: str = "extension"
    complete: Callable[[str], Any] | None = None
    """``complete(prefix)`` (may be async): the argument's completions, strings or dicts
    ``{value, label?, description?}`` (pi's ``getArgumentCompletions``; docs/writing-plugins.md)."""


@dataclass
class Shortcut:
    """An interactive-mode key (pi's ``registerShortcut``; a ``register_commands`` item): ``key`` a
    pi key id (``ctrl+alt+t``, ``f6``); ``handler(ctx)`` may be async (docs/writing-plugins.md)."""

    key: str
    handler: Callable[[Any], Any]
    description: str = ""


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
    """A run mode, chosen with ``--mode <name>`` (or one of ``aliases``). ``run(run)`` receives
    a :class:`pi_host.plugins.modes.ModeRun` and returns the process exit code (may be async)."""

    name: str
    run: Callable[[Any], Any]
    description: str = ""
    aliases: list[str] = field(default_factory=list)
    """Other names for ``--mode`` (the print mode is also ``text``, as in pi)."""
    has_ui: bool = False
    """The mode can show dialogs (``ctx.has_ui``): pi's TUI and RPC modes."""
    can_ask: bool = False
    """The mode can put questions to the user before the session starts (project trust)."""
    opens_session: bool = False
    """The mode opens the run's session itself (``await run.open_session(ui=..., control=...)``),
    so the session is built with its UI; otherwise the CLI opens it headless before ``run``."""


@dataclass
class SessionStoreFactory:
    """Opens session stores. ``open(options)`` returns a session store
    (:class:`pi_host.session.store.SessionStore`). The setting ``sessionStore`` picks one by
    name; without it the last registered factory opens the session."""

    name: str
    open: Callable[[Any], Any]
    list_sessions: Callable[..., list[Any]] | None = None
    """Optional ``list_sessions(cwd, agent_dir, session_dir=None, all_dirs=False)``: session
    summaries (``.to_json()`` gives pi's ``SessionInfo`` fields), newest first. A store may also
    take ``quick=True`` (rows only: no full message text), ``progress=callback`` (rows in
    batches as files are read) and ``warn=callback`` (damaged files); the session picker uses
    them when the store accepts them."""


@dataclass
class Subcommand:
    """``pi <name> [args...]``: ``run(argv)`` returns an exit code."""

    name: str
    run: Callable[[list[str]], int]
    description: str = ""


@dataclass
class MessageRenderer:
    """Draws messages in the interactive transcript: ``render(message, rc)`` returns ANSI text
    (lines of at most ``rc.width`` columns; see :mod:`pi_host.lib.render`). Chosen by ``role``
    (``assistant``, ``user``, ``toolResult``, ``bashExecution``, ``compactionSummary``,
    ``branchSummary``, ``custom``...) and, for ``custom`` messages, ``custom_type``; the last
    registration for a key wins, and one that raises falls back to the one before it."""

    render: Callable[[Any, Any], str]
    role: str | None = None
    custom_type: str | None = None


@dataclass
class ToolRenderer:
    """Draws one tool's calls: ``render_call(call, rc)`` while the call streams and runs, and
    ``render_result(call, result, rc)`` once it finished (``call`` has ``name``, ``args``,
    ``partial``; ``result`` has ``content``, ``details``, ``is_error``). Either may be None."""

    tool: str
    render_call: Callable[[Any, Any], str] | None = None
    render_result: Callable[[Any, Any, Any], str] | None = None


@dataclass
class FooterRenderer:
    """Draws the footer under the editor: ``render(info, rc)`` with ``info`` a
    :class:`pi_host.lib.render.FooterInfo` (cwd, branch, model, tokens, cost, context use...)."""

    render: Callable[[Any, Any], str]


@dataclass
class Resources:
    """Skills, prompt templates and themes a plugin package ships, found like the agent dir's.

    ``root`` is their folder (usually the package's: ``Path(__file__).parent``); each list names
    files or folders relative to it. None: the conventional ``<root>/skills``, ``<root>/prompts``
    or ``<root>/themes`` when it exists; ``[]``: none of that kind."""

    root: str
    skills: list[str] | None = None
    prompts: list[str] | None = None
    themes: list[str] | None = None
