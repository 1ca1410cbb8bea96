"""The session layer: one :class:`AgentSession` turns prompts into runs of the loop, maps the
loop's callbacks onto plugin events, persists finished messages and ends each prompt with
``agent_settled`` (reference §4). Plugins see it through :class:`ExtensionContext` (``ctx``)."""

from pi_host.session.agent_session import AgentSession, SessionConfig
from pi_host.session.context import ExtensionContext
from pi_host.session.errors import SessionError

__all__ = ["AgentSession", "ExtensionContext", "SessionConfig", "SessionError"]
