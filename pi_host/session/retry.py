"""Automatic retry of transient provider errors at the session level (reference §3.8).

When a run ends with an assistant error that looks transient (overloaded, rate limit, 5xx,
connection reset...) and is not a context overflow, the session waits ``base × 2^(n-1)`` ms (capped),
hides the failed answer from the model with a ``context_edit`` entry (it stays in the file) and
re-sends the context. ``auto_retry_start`` / ``auto_retry_end`` events report it.

As in pi, ``auto_retry_start`` follows ``agent_end`` and is followed by ``entry_appended`` (the
``context_edit``); ``auto_retry_end {success: true}`` follows the ``message_end`` of the first
answer that is not an error, before its ``turn_end``, and starts the count again: a fault in a
later turn of the same run is attempt 1 again. A run that ends in an error with retries used
up (or not retryable) closes the sequence with ``success: false`` after its ``agent_end``.

A delay the server asked for (``Retry-After``, named in the error text) is waited out; one beyond
``retry.maxAgentDelayMs``, or refused by the provider layer, is not retried at all.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pi_host.loop import events
from pi_host.protocol.abort import AbortError, AbortSignal, race
from pi_host.protocol.failures import is_retryable_error, server_retry_delay_ms


class AutoRetry:
    def __init__(self, session: Any) -> None:
        self.session = session
        self.attempt = 0
        self.pending = False

    def _settings(self) -> dict[str, Any]:
        retry = self.session.config.settings.get("retry")
        return retry if isinstance(retry, dict) else {}

    @property
    def enabled(self) -> bool:
        return self._settings().get("enabled", True) is not False and self.session.auto_retry_enabled

    @property
    def max_attempts(self) -> int:
        return int(self._settings().get("maxRetries", 3))

    @property
    def max_delay_ms(self) -> int:
        return int(self._settings().get("maxAgentDelayMs", 60000))

    def delay_ms(self, attempt: int, error_text: str | None = None) -> int:
        """``base × 2^(attempt-1)`` capped, or the server's delay when longer."""
        base = int(self._settings().get("baseDelayMs", 2000))
        cap = self.max_delay_ms
        delay = min(base * 2 ** (attempt - 1), cap) if cap > 0 else base * 2 ** (attempt - 1)
        server = server_retry_delay_ms(error_text)
        return max(delay, int(server)) if server is not None else delay

    def decide(self, final: Any) -> bool:
        """Called at ``agent_end``: will this run be retried?"""
        model = self.session.model
        window = getattr(model, "context_window", None)
        self.pending = bool(
            final is not None
            and self.enabled
            and self.attempt < self.max_attempts
            and is_retryable_error(final, window, self.max_delay_ms)
        )
        return self.pending

    async def prepare(self, final: Any, signal: AbortSignal) -> bool:
        """Hide the failed answer, wait, and report whether the retry should run."""
        self.pending = False
        self.attempt += 1
        delay = self.delay_ms(self.attempt, final.error_message)
        await self.session.emit_event(
            events.auto_retry_start(self.attempt, self.max_attempts, delay, final.error_message or "")
        )
        await omit_answer(self.session, final)
        messages = self.session.messages
        if messages and messages[-1] is final:
            messages.pop()
        try:
            await race(signal, asyncio.sleep(delay / 1000))
        except AbortError:
            await self.finish_failed("Retry cancelled")
            return False
        return True

    async def message_end(self, message: Any) -> None:
        """After a ``message_end`` has been announced: an answer that is not an error ends the
        retry sequence (pi counts an aborted answer as one too)."""
        if self.attempt and getattr(message, "role", None) == "assistant" and message.stop_reason != "error":
            await self.session.emit_event(events.auto_retry_end(True, self.attempt))
            self.attempt = 0

    async def finish(self, final: Any) -> None:
        """After a run that is not retried: close a retry sequence still open (it failed)."""
        if self.attempt:
            await self.finish_failed(final.error_message if final is not None else "Retry failed")

    async def finish_failed(self, error: str | None) -> None:
        await self.session.emit_event(events.auto_retry_end(False, self.attempt, error or ""))
        self.attempt = 0


async def omit_answer(session: Any, final: Any) -> None:
    """Hide a failed answer from the model with a ``context_edit`` (announced with
    ``entry_appended``, as pi does) when it was stored."""
    last = getattr(session, "_last_entry", None)
    if last and last[0] is final and last[1]:
        entry = session.store.append({"type": "context_edit", "targetId": last[1], "replacement": None})
        await session.emit_event(events.entry_appended(entry))
