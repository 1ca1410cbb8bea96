"""One summarization request to the session's model, with pi's options and retry policy.

Strategies that ask a model for a summary call :func:`complete_summary`; it applies what
reference §7.4 requires of every summarization request (no tools, no cache writes, a fresh
routing session id, the session's thinking level on reasoning models, the output cap clamped to
the window) and retries transient errors like the session's auto-retry (§3.8), reporting them
with ``summarization_retry_*`` events (§7.8). A truncated (``length``) answer or one that calls a
tool is a failure: a partial summary must never be stored.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from pi_host.loop import events
from pi_host.protocol.abort import AbortError, AbortSignal, race
from pi_host.protocol.failures import is_retryable_error


class SummarizationError(Exception):
    """The model could not produce a usable summary (the message says why)."""


@dataclass
class SummaryResponse:
    text: str
    usage: Any
    """A :class:`pi_host.protocol.Usage`."""
    message: Any
    """The final assistant message."""


def _retry_settings(settings: dict[str, Any]) -> dict[str, Any]:
    retry = settings.get("retry")
    return retry if isinstance(retry, dict) else {}


async def _request_once(session: Any, model: Any, system_prompt: str, prompt: str, signal: Any) -> Any:
    from pi_host.lib.llm.tokens import clamp_max_tokens
    from pi_host.protocol import LlmContext, StreamOptions, SystemMessage, TextContent, UserMessage

    messages = [SystemMessage(content=system_prompt), UserMessage(content=[TextContent(text=prompt)])]
    level = getattr(session, "thinking_level", None) or "off"
    bridge = getattr(session, "bridge", None)  # the session's retries, timeouts and secrets
    options = bridge.transport_options() if bridge is not None else StreamOptions()
    options.signal = signal
    options.api_key = getattr(session.config, "api_key", None) or session.registry.get_api_key(model.provider)
    options.max_tokens = clamp_max_tokens(model, messages)
    options.thinking_level = level if getattr(model, "reasoning", False) and level != "off" else None
    import uuid  # here, not at import: uuid loads platform (~5 ms of every start)

    options.session_id = str(uuid.uuid4())
    options.cache_retention = "none"
    stream = session.registry.stream_fn(model)(model, LlmContext(messages=messages, tools=[]), options)

    async def consume() -> Any:
        async for event in stream:
            if event.type == "done":
                return event.message
            if event.type == "error":
                return event.error
        raise SummarizationError("the provider stream ended without a result")

    return await race(signal, consume())


async def complete_summary(
    session: Any,
    system_prompt: str,
    prompt: str,
    *,
    signal: AbortSignal | None = None,
    source: str = "compaction",
    reason: str | None = None,
    model: Any = None,
) -> SummaryResponse:
    """Ask ``model`` (default: the session's) for a summary; returns its text and usage.

    Raises :class:`SummarizationError` (unusable answer, error after retries) or
    :class:`pi_host.protocol.abort.AbortError` (aborted).
    """
    model = model or session.model
    if model is None:
        raise SummarizationError("no model is selected")
    retry = _retry_settings(session.config.settings)
    enabled = retry.get("enabled", True) is not False
    max_attempts = int(retry.get("maxRetries", 3))
    base = int(retry.get("baseDelayMs", 2000))
    cap = int(retry.get("maxAgentDelayMs", 60000))
    attempt = 0
    while True:
        if attempt:
            await session.emit_event(
                events.summarization_retry("attempt_start", source, reason=reason or None)
            )
        message = await _request_once(session, model, system_prompt, prompt, signal)
        stop = message.stop_reason
        if stop == "aborted":
            raise AbortError(message.error_message or "Operation aborted")
        if stop == "error":
            error = message.error_message or "unknown provider error"
            if enabled and attempt < max_attempts and is_retryable_error(message, model.context_window):
                attempt += 1
                delay = min(base * 2 ** (attempt - 1), cap) if cap > 0 else base * 2 ** (attempt - 1)
                await session.emit_event(
                    events.summarization_retry(
                        "scheduled",
                        source,
                        attempt=attempt,
                        maxAttempts=max_attempts,
                        delayMs=delay,
                        errorMessage=error,
                    )
                )
                try:
                    await race(signal, asyncio.sleep(delay / 1000))
                except AbortError:
                    await _finished(session, source, attempt, False, "Retry cancelled")
                    raise
                continue
            if attempt:
                await _finished(session, source, attempt, False, error)
            raise SummarizationError(error)
        if attempt:
            await _finished(session, source, attempt, True, None)
        if stop == "length":
            raise SummarizationError("the summary hit the output token limit and was not stored")
        if message.tool_calls():
            raise SummarizationError("the summarizer answered with a tool call instead of a summary")
        text = message.text().strip()
        if not text:
            raise SummarizationError("the summarizer returned an empty summary")
        return SummaryResponse(text, message.usage, message)


async def _finished(session: Any, source: str, attempt: int, success: bool, error: str | None) -> None:
    await session.emit_event(
        events.summarization_retry(
            "finished", source, success=success, attempt=attempt, finalError=error or None
        )
    )


def add_usage(total: Any, more: Any) -> Any:
    """Sum two usages (either may be None), costs included."""
    if more is None:
        return total
    if total is None:
        return more.model_copy(deep=True)
    out = total.model_copy(deep=True)
    for name in ("input", "output", "cache_read", "cache_write", "total_tokens"):
        setattr(out, name, (getattr(out, name) or 0) + (getattr(more, name) or 0))
    for name in ("input", "output", "cache_read", "cache_write", "total"):
        setattr(out.cost, name, (getattr(out.cost, name) or 0) + (getattr(more.cost, name) or 0))
    return out
