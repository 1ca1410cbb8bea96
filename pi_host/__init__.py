"""pi-host: a plugin-first Python agent harness compatible with pi.

The public API is imported lazily so that ``pi --version`` and plugin modules that only need
``hookimpl`` stay cheap. Plugins use the names exported here and the documented modules:
``pi_host.protocol`` (messages, stream events, ``abort``), ``pi_host.loop.events`` (session
events), ``pi_host.plugins.registrations`` and ``pi_host.plugins.hookspecs`` (the plugin
contract), and the libraries in ``pi_host.lib``: ``llm`` (provider authors), ``toolkit`` (tool
authors), ``sessions`` (session stores), ``compaction`` (strategies), ``resources``,
``frontmatter`` and ``lazy`` (context sources), ``wire`` (modes). ``pi_host.config`` reads the
files pi shares (settings, trust, credentials, models.json).

The flat module paths of pi-host 0.1 (``pi_host.tools``, ``pi_host.llm.http``...) still import,
as the same modules: see :mod:`pi_host._aliases`.
"""

from __future__ import annotations

from pi_host import _aliases
from pi_host._exports import lazy_exports
from pi_host._version import __version__

_aliases.install()

_EXPORTS = {
    "hookimpl": "pi_host.plugins.dispatch",
    "PluginHost": "pi_host.plugins.dispatch",
    "PluginRecord": "pi_host.plugins.dispatch",
    "AbortController": "pi_host.protocol.abort",
    "AbortSignal": "pi_host.protocol.abort",
    "AbortError": "pi_host.protocol.abort",
    "Tool": "pi_host.loop.tools",
    "ToolResult": "pi_host.loop.tools",
    "ToolError": "pi_host.loop.tools",
    "ToolContext": "pi_host.loop.tools",
    "ProviderApi": "pi_host.plugins.registrations",
    "ProviderInfo": "pi_host.plugins.registrations",
    "Command": "pi_host.plugins.registrations",
    "Shortcut": "pi_host.plugins.registrations",
    "Resources": "pi_host.plugins.registrations",
    "CliFlag": "pi_host.plugins.registrations",
    "ContextSource": "pi_host.plugins.registrations",
    "CompactionStrategy": "pi_host.plugins.registrations",
    "Mode": "pi_host.plugins.registrations",
    "SessionStoreFactory": "pi_host.plugins.registrations",
    "Subcommand": "pi_host.plugins.registrations",
    "MessageRenderer": "pi_host.plugins.registrations",
    "ToolRenderer": "pi_host.plugins.registrations",
    "FooterRenderer": "pi_host.plugins.registrations",
    "AgentSession": "pi_host.session",
    "ExtensionContext": "pi_host.session",
    "SessionOptions": "pi_host.sdk",
    "create_session": "pi_host.sdk",
    "run_prompt": "pi_host.sdk",
}

__all__ = ["__version__", *_EXPORTS]
__getattr__ = lazy_exports("pi_host", _EXPORTS)
