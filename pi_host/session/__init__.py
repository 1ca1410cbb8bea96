"""The session layer: one :class:`AgentSession` turns prompts into runs of the loop, maps the
loop's callbacks onto plugin events, persists finished messages and ends each prompt with
``agent_settled`` (reference §4). Plugins see it through :class:`ExtensionContext` (``ctx``).

Names are imported on first use, so the small modules here (``errors``, ``store``) stay cheap.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "AgentSession": "pi_host.session.agent_session",
    "SessionConfig": "pi_host.session.agent_session",
    "ExtensionContext": "pi_host.session.context",
    "SessionError": "pi_host.session.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pi_host.session' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
