"""Growing the partial assistant message and emitting the matching stream events (reference §2).

Every provider adapter drives one :class:`MessageBuilder` per request::

    b = MessageBuilder(model)
    yield b.start()
    for ev in b.text("t0", "Hel"): yield ev        # opens the block on first use
    yield b.text_end("t0")
    yield b.toolcall_start(1, id="call_1", name="read")
    yield b.toolcall_delta(1, '{"path":"a')         # partial arguments parsed with jiter
    yield b.toolcall_end(1)                         # strict parse once, argumentsError if needed
    b.set_usage(input=10, output=3)
    for ev in b.done("toolUse", raw="tool_use"): yield ev   # closes open blocks, then done

Blocks are addressed by a provider-side ``key`` (Anthropic's content-block index, an OpenAI
tool-call index, ...), so interleaved blocks work; ``content_index`` is the block's position in
``partial.content``. After its ``*_end`` a key is free again and a later use opens a new block.

Cost per delta matters (adapters stream tens of thousands of deltas): text grows by in-place
append (no quadratic copying), delta events skip re-validation, and tool-call arguments are kept
current by :class:`~pi_host.lib.llm.partial_json.PartialObject` (jiter partial parses, with a fast
path for deltas that only extend the string being streamed).

:func:`guard` wraps an adapter's event generator so that nothing escapes as an exception: errors,
aborts and idle timeouts become one terminal ``error`` event carrying what streamed so far. The
error text passes the builder's :class:`~pi_host.lib.llm.redact.Redactor` (the request's key and
``StreamOptions.secrets``, given as ``MessageBuilder(model, options=options)``), so no key reaches
events, the session file or stderr.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Hashable, Iterable
from typing import Any

from pi_host.lib.llm.partial_json import PartialObject, parse_final
from pi_host.lib.llm.redact import PATTERNS_ONLY, Redactor
from pi_host.lib.llm.usage import finalize_usage
from pi_host.protocol import (
    AssistantMessage,
    DoneEvent,
    ErrorEvent,
    StartEvent,
    TextContent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingContent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    Usage,
)
from pi_host.protocol.abort import NEVER, AbortError, AbortSignal

ABORTED_MESSAGE = "Request was aborted"


_new = object.__new__


def _fast(cls: type, data: dict[str, Any]) -> Any:
    """Build a protocol ``*_delta`` event without re-checking fields the builder already knows
    are right (``data`` holds exactly the event's fields).

    Per-delta events are the hot path (tens of thousands per response). The result is an
    ordinary record (dump, copy and attribute assignment behave as usual).
    """
    event = _new(cls)
    event.__dict__ = data
    return event


_DONE_REASONS = frozenset({"stop", "length", "toolUse"})


def sign_block(block: Any, signature: str | None) -> None:
    """Set a block's provider signature field: ``thinkingSignature``, ``textSignature`` or a tool
    call's ``thoughtSignature`` (also for blocks that have already ended)."""
    if block.type == "thinking":
        block.thinking_signature = signature
    elif block.type == "text":
        block.text_signature = signature
    elif block.type == "toolCall":
        block.thought_signature = signature


class _Open:
    """Book-keeping for a block that has started but not ended."""

    __slots__ = ("index", "kind", "block", "args")

    def __init__(self, index: int, kind: str, block: Any) -> None:
        self.index = index
        self.kind = kind
        self.block = block
        self.args: PartialObject | None = None


class MessageBuilder:
    """Builds one :class:`AssistantMessage` and the events that describe its growth."""

    def __init__(
        self, model: Any, *, api: str | None = None, provider: str | None = None, options: Any = None
    ) -> None:
        self.model = model
        self.redact: Redactor = PATTERNS_ONLY if options is None else Redactor.from_options(options)
        """Applied to every error text (``options``: the request's ``StreamOptions``)."""
        self.message = AssistantMessage(
            api=api or getattr(model, "api", ""),
            provider=provider or getattr(model, "provider", ""),
            model=getattr(model, "id", ""),
            stop_reason="pending",
        )
        self._open: dict[Hashable, _Open] = {}
        self.started = False
        self.finished = False
        self._t0 = time.monotonic()

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> StartEvent:
        self.started = True
        return StartEvent(partial=self.message)

    def is_open(self, key: Hashable) -> bool:
        return key in self._open

    def block(self, key: Hashable) -> Any:
        """The content block currently open under ``key``."""
        return self._open[key].block

    def index_of(self, key: Hashable) -> int:
        return self._open[key].index

    def _add(self, key: Hashable, kind: str, block: Any) -> int:
        if key in self._open:
            raise KeyError(f"block {key!r} is already open")
        content = self.message.content
        content.append(block)
        index = len(content) - 1
        self._open[key] = _Open(index, kind, block)
        return index

    # --- text ---------------------------------------------------------------------------------

    def text_start(self, key: Hashable = "text", *, signature: str | None = None) -> TextStartEvent:
        index = self._add(key, "text", TextContent(text="", text_signature=signature))
        return TextStartEvent(content_index=index, partial=self.message)

    def text_delta(self, key: Hashable, delta: str) -> TextDeltaEvent:
        entry = self._open[key]
        fields = entry.block.__dict__
        # Popping the value first leaves one reference, so CPython appends in place (linear).
        text = fields.pop("text")
        text += delta
        fields["text"] = text
        return _fast(
            TextDeltaEvent,
            {"type": "text_delta", "content_index": entry.index, "delta": delta, "partial": self.message},
        )

    def text(self, key: Hashable, delta: str) -> tuple[Any, ...]:
        """``text_delta``, opening the block first when ``key`` is not open."""
        if key in self._open:
            return (self.text_delta(key, delta),)
        return (self.text_start(key), self.text_delta(key, delta))

    def text_end(
        self, key: Hashable, content: str | None = None, *, signature: str | None = None
    ) -> TextEndEvent | None:
        entry = self._open.pop(key, None)
        if entry is None:
            return None
        block = entry.block
        if content is not None:
            block.text = content
        if signature is not None:
            block.text_signature = signature
        return TextEndEvent(content_index=entry.index, content=block.text, partial=self.message)

    # --- thinking -----------------------------------------------------------------------------

    def thinking_start(
        self,
        key: Hashable = "thinking",
        *,
        signature: str | None = None,
        redacted: bool = False,
        text: str = "",
    ) -> ThinkingStartEvent:
        block = ThinkingContent(
            thinking=text, thinking_signature=signature, redacted=True if redacted else None
        )
        index = self._add(key, "thinking", block)
        return ThinkingStartEvent(content_index=index, partial=self.message)

    def thinking_delta(self, key: Hashable, delta: str) -> ThinkingDeltaEvent:
        entry = self._open[key]
        fields = entry.block.__dict__
        text = fields.pop("thinking")
        text += delta
        fields["thinking"] = text
        return _fast(
            ThinkingDeltaEvent,
            {"type": "thinking_delta", "content_index": entry.index, "delta": delta, "partial": self.message},
        )

    def thinking(self, key: Hashable, delta: str, *, signature: str | None = None) -> tuple[Any, ...]:
        """``thinking_delta``, opening the block first when ``key`` is not open."""
        if key in self._open:
            return (self.thinking_delta(key, delta),)
        return (self.thinking_start(key, signature=signature), self.thinking_delta(key, delta))

    def add_signature(self, key: Hashable, piece: str) -> None:
        """Append to the open thinking block's signature (streamed signatures)."""
        block = self._open[key].block
        block.thinking_signature = (block.thinking_signature or "") + piece

    def set_signature(self, key: Hashable, signature: str | None) -> None:
        sign_block(self._open[key].block, signature)

    def thinking_end(
        self, key: Hashable, content: str | None = None, *, signature: str | None = None
    ) -> ThinkingEndEvent | None:
        entry = self._open.pop(key, None)
        if entry is None:
            return None
        block = entry.block
        if content is not None:
            block.thinking = content
        if signature is not None:
            block.thinking_signature = signature
        return ThinkingEndEvent(content_index=entry.index, content=block.thinking, partial=self.message)

    # --- tool calls ---------------------------------------------------------------------------

    def toolcall_start(
        self, key: Hashable, *, id: str = "", name: str = "", **fields: Any
    ) -> ToolCallStartEvent:
        index = self._add(key, "toolCall", ToolCall(id=id, name=name, arguments={}, **fields))
        return ToolCallStartEvent(content_index=index, partial=self.message)

    def toolcall_delta(self, key: Hashable, delta: str) -> ToolCallDeltaEvent:
        entry = self._open[key]
        if delta:
            tracker = entry.args
            if tracker is None:
                tracker = entry.args = PartialObject()
            parsed = tracker.feed(delta)
            if parsed is not None:
                entry.block.__dict__["arguments"] = parsed
        return _fast(
            ToolCallDeltaEvent,
            {"type": "toolcall_delta", "content_index": entry.index, "delta": delta, "partial": self.message},
        )

    def toolcall(
        self, key: Hashable, delta: str, *, id: str | None = None, name: str | None = None
    ) -> tuple[Any, ...]:
        """``toolcall_delta``, opening the call first when ``key`` is not open; ``id``/``name``
        fill in fields that arrive late (OpenAI-compatible servers)."""
        if key not in self._open:
            return (self.toolcall_start(key, id=id or "", name=name or ""), self.toolcall_delta(key, delta))
        if id or name:
            block = self._open[key].block
            if id and not block.id:
                block.id = id
            if name and not block.name:
                block.name = name
        return (self.toolcall_delta(key, delta),)

    def toolcall_arguments_text(self, key: Hashable) -> str:
        tracker = self._open[key].args
        return tracker.text if tracker is not None else ""

    def toolcall_end(self, key: Hashable, arguments: dict[str, Any] | None = None) -> ToolCallEndEvent | None:
        """Close a call: ``arguments`` given (APIs that send whole objects) or parsed from the
        streamed text, strictly, once."""
        entry = self._open.pop(key, None)
        if entry is None:
            return None
        block = entry.block
        if arguments is not None and isinstance(arguments, dict):
            block.arguments = arguments
        else:
            parsed, error = parse_final(entry.args.text if entry.args is not None else "")
            block.arguments = parsed
            if error is not None:
                block.arguments_error = error
        return ToolCallEndEvent(content_index=entry.index, tool_call=block, partial=self.message)

    # --- ending ---------------------------------------------------------------------------------

    def end(self, key: Hashable) -> Any:
        """End whatever block is open under ``key`` (or return None)."""
        entry = self._open.get(key)
        if entry is None:
            return None
        if entry.kind == "text":
            return self.text_end(key)
        if entry.kind == "thinking":
            return self.thinking_end(key)
        return self.toolcall_end(key)

    def end_all(self) -> list[Any]:
        """End every open block, in block order."""
        keys = sorted(self._open, key=lambda k: self._open[k].index)
        return [self.end(key) for key in keys]

    def set_usage(self, usage: Usage | None = None, **fields: int | None) -> Usage:
        """Update token counts (snake_case names); totals and cost are recomputed."""
        target = self.message.usage
        if usage is not None:
            target = self.message.usage = usage
        for name, value in fields.items():
            if value is not None:
                setattr(target, name, value)
        return finalize_usage(self.model, target)

    def _stamp(self) -> None:
        self.finished = True
        if self.message.duration_ms is None:
            self.message.duration_ms = int((time.monotonic() - self._t0) * 1000)

    def done(
        self, stop_reason: str = "stop", *, raw: str | None = None, error_message: str | None = None
    ) -> list[Any]:
        """Close open blocks and finish: ``done`` for stop/length/toolUse, else ``error``."""
        events = self.end_all()
        message = self.message
        if raw is not None:
            message.raw_stop_reason = raw
        finalize_usage(self.model, message.usage)
        if stop_reason not in _DONE_REASONS:
            return events + [
                self.fail(
                    error_message or f"Provider stopped: {raw or stop_reason}",
                    aborted=stop_reason == "aborted",
                )
            ]
        message.stop_reason = stop_reason  # type: ignore[assignment]
        self._stamp()
        events.append(DoneEvent(reason=stop_reason, message=message))  # type: ignore[arg-type]
        return events

    def add_diagnostic(self, diagnostic: dict[str, Any]) -> None:
        """Append one of pi's ``diagnostics`` entries (a fallback taken, a rewrite) to the message."""
        self.message.diagnostics = [*(self.message.diagnostics or ()), diagnostic]

    def fail(self, error_message: str, *, aborted: bool = False) -> ErrorEvent:
        """The terminal ``error`` event; content and usage so far are kept. Open blocks stay as
        they are (no ``*_end`` is emitted for them)."""
        self._open.clear()
        message = self.message
        message.stop_reason = "aborted" if aborted else "error"
        message.error_message = self.redact(error_message)
        finalize_usage(self.model, message.usage)
        self._stamp()
        return ErrorEvent(reason="aborted" if aborted else "error", error=message)


# --- guarding an adapter ----------------------------------------------------------------------


def describe_error(exc: BaseException, redact: Redactor = PATTERNS_ONLY) -> str:
    """One line for an exception raised while streaming."""
    from pi_host.lib.llm.errors import describe_transport_error

    return describe_transport_error(exc, redact)


class EventBatch:
    """Several events for :func:`guard` in one hop: an adapter's inner generator may yield one of
    these instead of each event. ``events`` is iterated lazily, so an adapter that parses a
    chunk only when its events are pulled keeps ``partial`` exactly as far as the event in hand.
    (One async-generator step per event costs about as much as decoding the event.)"""

    __slots__ = ("events",)

    def __init__(self, events: Iterable[Any]) -> None:
        self.events = events


def guard(
    builder: MessageBuilder,
    inner: AsyncIterator[Any],
    signal: AbortSignal | None = None,
    *,
    aborted_message: str = ABORTED_MESSAGE,
) -> AsyncIterator[Any]:
    """Yield ``inner``'s events; turn any failure or abort into one terminal ``error`` event.

    On abort the task running the stream is cancelled *while it waits inside the adapter* (an
    HTTP read, a retry sleep; the generator's ``ag_running`` tells), so the response is closed at
    once; while the consumer holds an event the abort is noticed at the next step instead.
    ``aborted_message`` is the error text of an aborted stream.

    ``inner`` is closed *before* the terminal event is handed on: a consumer that stops at
    ``done`` / ``error`` (the agent loop does) leaves nothing open behind it. Otherwise the
    adapter's generators, suspended inside their ``async with`` around the response, would be
    closed later by the event loop's finaliser, concurrently with one another (pytest and the
    CLI printed "aclose(): asynchronous generator is already running" for that).
    """
    me: list[Any] = []
    generator = _guard(builder, inner, signal, me, aborted_message)
    me.append(generator)
    return generator


async def _close(inner: Any) -> None:
    closer = getattr(inner, "aclose", None)
    if closer is not None:
        try:
            await closer()
        except Exception:  # noqa: BLE001 - closing must not mask the terminal event
            pass


async def _guard(
    builder: MessageBuilder,
    inner: AsyncIterator[Any],
    signal: AbortSignal | None,
    me: list[Any],
    aborted_message: str,
):
    task = asyncio.current_task()
    ours = False

    def on_abort() -> None:
        nonlocal ours
        if me[0].ag_running and task is not None and not task.done():
            ours = True
            task.cancel()

    watching = signal is not None and signal is not NEVER
    # Registering on an aborted signal would call on_abort right here, cancelling ourselves.
    remove = signal.add_listener(on_abort) if watching and not signal.aborted else None  # type: ignore[union-attr]
    done_cls, error_cls = DoneEvent, ErrorEvent
    tail: list[Any] = []  # the terminal event(s), handed on once inner is closed
    try:
        try:
            if watching and signal.aborted:  # type: ignore[union-attr]
                raise AbortError()
            async for item in inner:
                for event in item.events if item.__class__ is EventBatch else (item,):
                    cls = event.__class__
                    if cls is done_cls or cls is error_cls:
                        tail.append(event)
                        break
                    yield event
                    if watching and signal.aborted:  # type: ignore[union-attr]
                        raise AbortError()
                if tail:
                    break
            else:
                if not builder.finished:
                    if not builder.started:
                        tail.append(builder.start())
                    tail.append(builder.fail("Provider stream ended unexpectedly without a final event"))
        except asyncio.CancelledError:
            if not (watching and signal.aborted):  # type: ignore[union-attr]
                raise  # someone else's cancellation: let it through
            if ours and task is not None:
                task.uncancel()
            if not builder.finished:
                tail.append(builder.fail(aborted_message, aborted=True))
        except AbortError:
            if not builder.finished:
                tail.append(builder.fail(aborted_message, aborted=True))
        except Exception as exc:  # the stream contract: failures are events, never raises
            if not builder.finished:
                aborted = bool(watching and signal.aborted)  # type: ignore[union-attr]
                text = aborted_message if aborted else describe_error(exc, builder.redact)
                tail.append(builder.fail(text, aborted=aborted))
        # Stop listening first: an abort now must not cancel the closing below.
        if remove is not None:
            remove()
            remove = None
        await _close(inner)
    finally:
        if remove is not None:
            remove()
        # Only when the consumer left early (GeneratorExit) is inner still open here.
        await _close(inner)
    for event in tail:
        yield event
