"""The session layer: one :class:`AgentSession` turns prompts into runs of the loop, maps the
loop's callbacks onto plugin events, persists finished messages and ends each prompt with
``agent_settled`` (reference §4). Plugins see it through :class:`ExtensionContext` (``ctx``).

Names are imported on first use, so the small modules here (``errors``, ``store``) stay cheap.
"""

from __future__ import annotations

from pi_host._exports import lazy_exports

_EXPORTS = {
    "AgentSession": "pi_host.session.agent_session",
    "SessionConfig": "pi_host.session.agent_session",
    "ExtensionContext": "pi_host.session.context",
    "SessionError": "pi_host.session.errors",
}

__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports("pi_host.session", _EXPORTS)
