"""The actions a plugin takes on its session through ``ctx`` beyond the kernel's few (reference
§9.1, §9.2): messages, entries, labels, tools, model and thinking level, commands run without a
shell, an event bus shared by every plugin of a host, session control (new, fork, switch,
reload, shutdown), runtime providers and subscriptions, and sub-sessions.

:class:`ExtensionApi` is the ``ctx`` the SDK gives every session (it extends
:class:`pi_host.session.context.ExtensionContext`). The less common actions live in submodules
imported on first use (``process``, ``providers``, ``subscriptions``, ``subsession``).
"""

from __future__ import annotations

from typing import Any

from pi_host.runtime.extension_api.api import ExtensionApi, as_custom_message, event_bus

__all__ = ["EventBus", "ExtensionApi", "as_custom_message", "event_bus", "run_command"]


def __getattr__(name: str) -> Any:
    if name in ("run_command", "KILL_GRACE_S"):
        from pi_host.lib.toolkit import process

        return getattr(process, name)
    if name == "EventBus":  # made on first use of the bus (pi_host.plugins.events)
        from pi_host.plugins.events import EventBus

        return EventBus
    raise AttributeError(name)
