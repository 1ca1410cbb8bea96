"""pi-host: a plugin-first Python agent harness compatible with pi.

The public API is imported lazily so that ``pi --version`` and plugin modules that only need
``hookimpl`` stay cheap. Plugins use only names exported here and the documented submodules:
``pi_host.protocol`` (messages, events), ``pi_host.tools`` and ``pi_host.toolkit`` (tool authors),
``pi_host.registrations`` (what register hooks return), ``pi_host.abort``, ``pi_host.llm`` (provider
authors), ``pi_host.session_store`` and ``pi_host.session_tree`` (session stores),
``pi_host.compaction`` (compaction strategies), ``pi_host.resources``, ``pi_host.frontmatter``,
``pi_host.lazy`` and ``pi_host.settings`` (context sources).
"""

from __future__ import annotations

from typing import Any

from pi_host._version import __version__

_EXPORTS = {
    "hookimpl": "pi_host.plugin_host",
    "PluginHost": "pi_host.plugin_host",
    "PluginRecord": "pi_host.plugin_host",
    "AbortController": "pi_host.abort",
    "AbortSignal": "pi_host.abort",
    "AbortError": "pi_host.abort",
    "Tool": "pi_host.tools",
    "ToolResult": "pi_host.tools",
    "ToolError": "pi_host.tools",
    "ToolContext": "pi_host.tools",
    "ProviderApi": "pi_host.registrations",
    "ProviderInfo": "pi_host.registrations",
    "Command": "pi_host.registrations",
    "CliFlag": "pi_host.registrations",
    "ContextSource": "pi_host.registrations",
    "CompactionStrategy": "pi_host.registrations",
    "Mode": "pi_host.registrations",
    "SessionStoreFactory": "pi_host.registrations",
    "Subcommand": "pi_host.registrations",
    "AgentSession": "pi_host.session",
    "ExtensionContext": "pi_host.session",
    "SessionOptions": "pi_host.sdk",
    "create_session": "pi_host.sdk",
    "run_prompt": "pi_host.sdk",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'pi_host' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value
