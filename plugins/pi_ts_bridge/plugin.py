"""The plugin object that stands for one extension in pi-host's plugin host.

It has exactly the hooks the extension needs: ``on_<event>`` for each event it subscribed to
(pi's event names are pi-host's hook names), ``register_tools`` / ``register_commands`` /
``register_cli_flags`` for what it registered. Each hook is one round trip to the bridge, where
the extension's handlers run in registration order under the event's rule; pi-host then applies
the same rule across plugins, in load order. A hook that hangs is cut by pi-host's hook timeout
(``pluginHookTimeoutMs``), like any plugin's.
"""

from __future__ import annotations

from typing import Any

from pi_host import CliFlag, Shortcut, hookimpl
from pi_host.plugins.dispatch import PluginHost, PluginRecord
from pi_ts_bridge.events import add_event_hook
from pi_ts_bridge.extension import Extension
from pi_ts_bridge.registry import make_command
from pi_ts_bridge.runtime import BridgeRuntime
from pi_ts_bridge.runtimes import RUNTIMES
from pi_ts_bridge.tools import ScriptTool


class ScriptPlugin:
    """One extension's hooks (set per instance: every extension has its own)."""

    def __init__(self, name: str) -> None:
        self.__name__ = name


def runtime_of(host: PluginHost) -> BridgeRuntime:
    """The host's bridge, started on first use (one per plugin host: a reload makes a new one)."""
    runtime = RUNTIMES.get(host)
    if runtime is None:
        runtime = RUNTIMES[host] = BridgeRuntime(host)
    return runtime


def load_extension(host: PluginHost, record: PluginRecord) -> ScriptPlugin:
    runtime = runtime_of(host)
    extension = runtime.load(record)
    plugin = extension.plugin = ScriptPlugin(record.name)
    snapshot = extension.snapshot
    for event in snapshot.get("events", []):
        add_event_hook(runtime, extension, event)
    if snapshot.get("providers") and not hasattr(plugin, "on_session_start"):
        add_event_hook(runtime, extension, "session_start")
    if extension.tools or snapshot.get("events"):  # tools may come later (session_start, commands)
        plugin.register_tools = hookimpl(lambda: [ScriptTool(extension, i) for i in extension.tools.values()])
    plugin.register_commands = hookimpl(lambda: _commands(extension))
    if snapshot.get("flags"):
        plugin.register_cli_flags = hookimpl(lambda: _flags(snapshot["flags"]))
    return plugin


def _commands(extension: Extension) -> list[Any]:
    items: list[Any] = [make_command(extension, info) for info in extension.commands.values()]
    runtime = extension.runtime
    for shortcut in extension.snapshot.get("shortcuts", []):
        key = shortcut["key"]

        async def press(ctx: Any, key: str = key) -> None:
            runtime.bind(ctx)
            await runtime.request(extension, {"t": "key", "key": key})

        items.append(Shortcut(key=key, handler=press, description=shortcut.get("description", "")))
    return items


def _flags(flags: list[dict[str, Any]]) -> list[CliFlag]:
    return [
        CliFlag(
            name=flag["name"],
            description=flag.get("description", ""),
            type="string" if flag.get("type") == "string" else "boolean",
            default=flag.get("default"),
        )
        for flag in flags
    ]
