"""Registration hooks: what a plugin contributes (lists of :mod:`pi_host.plugins.registrations`
items). Called in load order; the lists are concatenated. A plugin that raises is reported and
the others still register."""

from __future__ import annotations

from typing import Any

from pi_host.plugins.hookspecs._marker import hookspec

__all__ = [
    "load_script_extension",
    "register_cli_flags",
    "register_commands",
    "register_compaction_strategies",
    "register_context_sources",
    "register_models",
    "register_modes",
    "register_providers",
    "register_renderers",
    "register_resources",
    "register_session_stores",
    "register_settings_plugins",
    "register_subcommands",
    "register_tools",
]


@hookspec
def register_providers() -> list[Any]:
    """Wire APIs this plugin implements: ``ProviderApi`` items pairing an API name
    (``anthropic-messages``...) with a stream function (:class:`pi_host.protocol.StreamFn`)."""


@hookspec
def register_models() -> list[Any]:
    """Catalog entries: ``ProviderInfo`` items (a provider id, base URL, API, key environment
    variables, default model and models in models.json's shape)."""


@hookspec
def register_tools(ctx: Any) -> list[Any]:
    """Tools (:class:`pi_host.loop.tools.Tool`) for a session; ``ctx`` is its
    :class:`pi_host.loop.tools.ToolContext`. A later tool with the same name replaces an earlier one."""


@hookspec
def register_commands() -> list[Any]:
    """``Command`` items (a name used twice gets ``:1``, ``:2``) and interactive ``Shortcut`` keys."""


@hookspec
def register_cli_flags() -> list[Any]:
    """Extra long CLI flags: ``CliFlag`` items; read them back with ``ctx.get_flag(name)``."""


@hookspec
def register_context_sources() -> list[Any]:
    """``ContextSource`` items: named system-prompt sections and input expansion (skills,
    prompt templates)."""


@hookspec
def register_compaction_strategies() -> list[Any]:
    """``CompactionStrategy`` items. The host decides when and where to cut; the strategy writes
    the summary. ``compaction.strategy`` picks one by name, else the last registered wins."""


@hookspec
def register_modes() -> list[Any]:
    """Run modes: ``Mode`` items, chosen by ``--mode <name>`` (``-p`` is ``print``)."""


@hookspec
def register_session_stores() -> list[Any]:
    """``SessionStoreFactory`` items. ``sessionStore`` picks one by name, else the last registered
    wins; with none the session lives in memory."""


@hookspec
def register_subcommands() -> list[Any]:
    """CLI subcommands (``pi <name> ...``): ``Subcommand`` items."""


@hookspec
def register_renderers() -> list[Any]:
    """How the interactive mode draws things: ``MessageRenderer`` (by role and custom message
    type), ``ToolRenderer`` (a tool's call and result) and ``FooterRenderer`` items. The built-in
    renderers register through this hook too; the last registration for a key wins."""


@hookspec
def register_resources() -> list[Any]:
    """``Resources`` items: the skills, prompt templates and themes this package ships. They load
    after the ``skills`` / ``prompts`` / ``themes`` settings' paths (pi's package precedence); the
    ``packages`` setting's filter objects narrow them (docs/packages.md)."""


@hookspec
def register_settings_plugins(settings_path: str, problems: list[str]) -> list[Any]:
    """More plugins the settings file ``settings_path`` names (the user's, or a trusted project's
    ``extensions`` and ``packages``): absolute paths of ``.py`` files or package folders, or
    importable module names, loaded like ``-e`` ones. An unusable entry is one line in ``problems``."""


@hookspec(firstresult=True)
def load_script_extension(host: Any, record: Any) -> Any:
    """The plugin object for the TypeScript/JavaScript extension (pi's) at ``record.origin``, to
    join ``host`` (the built-in ``ts-bridge`` loads them); a raise is that extension's load failure."""
