"""What plugin handlers receive as ``ctx`` (reference §9.5): a view of their session and the few
actions a plugin may take on it."""

from __future__ import annotations

from typing import Any

from pi_host.protocol.abort import AbortSignal


class ExtensionContext:
    """``ctx`` of every event hook, command and context source of one session."""

    def __init__(self, session: Any) -> None:
        self._session = session

    @property
    def session(self) -> Any:
        """The :class:`pi_host.session.AgentSession` itself, for what ``ctx`` does not cover."""
        return self._session

    @property
    def cwd(self) -> str:
        return self._session.config.cwd

    @property
    def mode(self) -> str:
        """The run mode's name (``print``, ``json``, ``sdk``...)."""
        return self._session.config.mode

    @property
    def has_ui(self) -> bool:
        """The mode can show dialogs (pi's TUI and RPC modes)."""
        return self._session.config.has_ui

    @property
    def model(self) -> Any:
        return self._session.model

    @property
    def thinking_level(self) -> str:
        return self._session.thinking_level

    @property
    def settings(self) -> dict[str, Any]:
        """The merged settings (the project's only when it is trusted)."""
        return self._session.config.settings

    @property
    def signal(self) -> AbortSignal | None:
        """The running prompt's abort signal; None while the session is idle."""
        return self._session.signal

    @property
    def store(self) -> Any:
        return self._session.store

    def get_flag(self, name: str) -> Any:
        """A plugin CLI flag's value (``register_cli_flags``)."""
        return self._session.config.flags.get(name)

    def is_project_trusted(self) -> bool:
        return bool(self._session.config.project_trusted)

    def discovered_paths(self, key: str) -> list[str]:
        """``skillPaths``, ``promptPaths`` or ``themePaths`` from this session's
        ``resources_discover`` handlers, concatenated in load order."""
        return list(self._session.discovered.get(key) or ())

    def is_idle(self) -> bool:
        return not self._session.is_streaming

    def has_pending_messages(self) -> bool:
        return self._session.has_pending_messages()

    def abort(self) -> None:
        self._session.request_abort()

    @property
    def ui(self) -> Any:
        """The user interface (:class:`pi_host.session.ui.UI`): dialogs (``await select``,
        ``confirm``, ``input``, ``editor``) and display calls (``notify``, ``set_status``,
        ``set_widget``, ``set_title``, ``set_editor_text``). Without a UI, dialogs return their
        default at once."""
        from pi_host.session.ui import HookedUI

        return HookedUI(self._session)
