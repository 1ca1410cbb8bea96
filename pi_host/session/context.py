"""What plugin handlers receive as ``ctx`` (reference §9.5)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_host.protocol.abort import AbortSignal
from pi_host.protocol.transcript import replay_system
from pi_host.session.errors import SessionError

if TYPE_CHECKING:
    from pi_host.session import AgentSession


class ExtensionContext:
    """What plugin handlers see as ``ctx`` (reference §9.5)."""

    def __init__(self, session: AgentSession) -> None:
        self._session = session

    @property
    def session(self) -> AgentSession:
        return self._session

    @property
    def cwd(self) -> str:
        return self._session.config.cwd

    @property
    def mode(self) -> str:
        return self._session.config.mode

    @property
    def has_ui(self) -> bool:
        return self._session.config.mode in ("tui", "rpc")

    @property
    def model(self) -> Any:
        return self._session.model

    @property
    def thinking_level(self) -> str:
        return self._session.thinking_level

    @property
    def settings(self) -> dict[str, Any]:
        return self._session.config.settings

    @property
    def signal(self) -> AbortSignal | None:
        controller = self._session._controller
        return controller.signal if controller else None

    @property
    def store(self) -> Any:
        return self._session.store

    def get_flag(self, name: str) -> Any:
        return self._session.config.flags.get(name)

    def is_idle(self) -> bool:
        return not self._session.is_streaming

    def abort(self) -> None:
        self._session.request_abort()

    async def compact(self, custom_instructions: str | None = None) -> Any:
        return await self._session.compact(custom_instructions)

    async def navigate_tree(self, target_id: str | None, **options: Any) -> Any:
        """Move the leaf to ``target_id`` (optionally summarising the branch left behind)."""
        if self._session.compactor is None:
            raise SessionError("No tree navigation support is installed")
        return await self._session.compactor.navigate_tree(target_id, **options)

    def has_pending_messages(self) -> bool:
        return bool(self._session._steering or self._session._follow_up)

    def get_system_prompt(self) -> str:
        return replay_system(self._session.messages).render()
