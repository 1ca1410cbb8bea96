"""What the session asks of the compaction mechanism it is given (the library's
:class:`pi_host.runtime.compactor.Compactor`; :func:`pi_host.sdk.create_session` wires it in).

The session calls it at fixed points: before a prompt, between the turns of a run, when a run
ends, on manual compaction and on tree navigation. Without one, a session never compacts.
"""

from __future__ import annotations

from typing import Any, Protocol


class CompactionDriver(Protocol):
    async def before_prompt(self) -> None:
        """The pre-prompt threshold check (reference §7.1)."""

    async def between_turns(self, turn: dict[str, Any]) -> dict[str, Any] | None:
        """The loop's ``prepare_next_turn``: may compact mid-run and replace the context."""

    def will_retry(self, final: Any) -> bool:
        """At ``agent_end``: will overflow recovery retry this run?"""

    async def after_run(self, new_messages: list[Any], signal: Any = None) -> bool:
        """Overflow recovery and the post-run check; True when the prompt should be retried."""

    async def compact(self, custom_instructions: str | None = None, *, raise_on_cancel: bool = True) -> Any:
        """Manual compaction: the result, or None when cancelled and ``raise_on_cancel`` is false."""

    async def navigate_tree(self, target_id: str, **options: Any) -> dict[str, Any]:
        """Move the leaf, optionally summarising the branch left behind (reference §7.9)."""

    def abort(self) -> None:
        """Cancel a running compaction or branch summary."""
