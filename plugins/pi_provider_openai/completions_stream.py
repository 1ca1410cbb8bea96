"""Turning chat-completions stream chunks into host events (reference §2, §3.4).

:class:`CompletionsParser` is fed one decoded chunk (a dict) at a time and returns the events it
caused; :meth:`CompletionsParser.finish` ends the message. It knows nothing about HTTP, so the
same code parses a live response, recorded bytes and the benchmark stream.

openai-completions specifics: every block stays open until the stream ends, then all ``*_end``
events come together in block order; reasoning arrives in ``reasoning_content``, ``reasoning`` or
``reasoning_text`` and that field name becomes the block's ``thinkingSignature``; tool-call
deltas are matched by ``index`` (or by ``id``); usage usually arrives in a final chunk with empty
``choices``.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from pi_host.lib.llm.usage import apply_reported_cost, is_openrouter
from pi_host.protocol import Cost, Usage

REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
DONE = b"[DONE]"
"""The data of the event that ends the stream."""

_STOP = {
    "stop": "stop",
    "end": "stop",
    "eos": "stop",
    "length": "length",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
}


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_VALUE_KEYS = {"text": b'"content":', "tool": b'"arguments":'}
_LEARNING_TRIES = 16


class StreamFailure(Exception):
    """The stream itself reported an error (an ``error`` chunk)."""


def _first(*values: Any) -> Any:
    return next((value for value in values if value is not None), 0)


def usage_from(raw: dict[str, Any]) -> Usage:
    """Reference §1.4 mapping of an OpenAI-style ``usage`` object. ``reasoning`` is always set
    (0 when not reported) and ``cost.totalFromProvider`` is false, as pi writes them; the
    OpenRouter billed cost is applied after pricing (:func:`apply_reported_cost`)."""
    prompt_details = raw.get("prompt_tokens_details") or {}
    completion_details = raw.get("completion_tokens_details") or {}
    cache_read = _first(
        prompt_details.get("cached_tokens"), raw.get("prompt_cache_hit_tokens"), raw.get("cached_tokens")
    )
    cache_write = prompt_details.get("cache_write_tokens") or 0
    prompt = raw.get("prompt_tokens") or 0
    return Usage(
        input=max(0, prompt - cache_read - cache_write),
        output=raw.get("completion_tokens") or 0,
        cache_read=cache_read,
        cache_write=cache_write,
        reasoning=completion_details.get("reasoning_tokens") or raw.get("reasoning_tokens") or 0,
        cost=Cost(total_from_provider=False),
    )


def _continued_call(calls: Any) -> tuple[Any, str] | None:
    """``(index, arguments piece)`` of a ``tool_calls`` delta that only continues one call's
    arguments (no id, no name), else None."""
    if not calls or len(calls) != 1 or not isinstance(calls[0], dict):
        return None
    call = calls[0]
    function = call.get("function")
    if not isinstance(function, dict) or call.get("id") or function.get("name"):
        return None
    arguments = function.get("arguments")
    if not arguments or arguments.__class__ is not str:
        return None
    return call.get("index"), arguments


def map_finish_reason(reason: str | None) -> tuple[str, str | None]:
    """(pi stop reason, error message for unknown reasons)."""
    if reason is None:
        return "stop", None
    mapped = _STOP.get(reason)
    if mapped is not None:
        return mapped, None
    return "error", f"Provider finish_reason: {reason}"


class CompletionsParser:
    __slots__ = (
        "builder",
        "compat",
        "finish_reason",
        "_kind",
        "_seq",
        "_tool_keys",
        "_last_tool",
        "_text_key",
        "_thinking_key",
        "_saw_chunk",
        "_template",
        "_learning",
        "done",
    )

    def __init__(self, builder: Any, compat: dict[str, Any]) -> None:
        self.builder = builder
        self.compat = compat
        self.finish_reason: str | None = None
        self._kind = ""
        self._seq = 0
        self._tool_keys: dict[Any, Any] = {}
        self._last_tool: Any = None
        self._text_key: Any = None
        self._thinking_key: Any = None
        self._saw_chunk = False
        self._template: tuple[bytes, bytes, str] | None = None
        self._learning = _LEARNING_TRIES
        self.done = False
        """``feed_raw`` has seen ``data: [DONE]``."""

    def feed_raw(self, data: bytes) -> list[Any] | tuple[Any, ...]:
        """:meth:`feed` for the undecoded bytes of one chunk.

        A server sends thousands of chunks that differ from the one before only in the text (or
        argument) piece, byte for byte. Once a pure delta chunk has been decoded, its bytes before
        and after that string are kept as a template: a chunk that starts and ends with exactly
        those bytes and has one JSON string between them means the same thing with another
        piece, so only the string is decoded. Anything else is decoded whole. ``[DONE]`` sets
        :attr:`done` and gives no events (nor does anything after it).
        """
        template = self._template
        if template is not None and template[2] == self._kind and data.startswith(template[0]):
            head, tail = template[0], template[1]
            if data.endswith(tail):
                try:
                    piece = orjson.loads(data[len(head) : len(data) - len(tail)])
                except orjson.JSONDecodeError:
                    piece = None
                if piece and piece.__class__ is str:
                    if self._kind == "text":
                        return (self.builder.text_delta(self._text_key, piece),)
                    if self.builder.is_open(self._last_tool):
                        return (self.builder.toolcall_delta(self._last_tool, piece),)
        if data == DONE or self.done:
            self.done = True  # the end of the stream: whatever follows it is ignored
            self._template = None
            return ()
        chunk = orjson.loads(data)
        kind = self._kind
        events = self.feed(chunk)
        if self._learning and kind == self._kind and kind in _VALUE_KEYS and len(events) == 1:
            delta = self._pure_delta(chunk)
            if delta is not None:
                if kind == "text":
                    value = delta.get("content")
                else:
                    continued = _continued_call(delta.get("tool_calls"))
                    value = continued[1] if continued else None
                if value and value.__class__ is str:
                    self._learn(data, value, _VALUE_KEYS[kind])
        return events

    def _learn(self, data: bytes, value: str, key: bytes) -> None:
        self._learning -= 1
        if data.count(key) != 1:
            return
        at = data.find(key) + len(key)
        while data[at : at + 1] == b" ":
            at += 1
        found = _JSON_STRING.match(data, at)
        if found is not None and orjson.loads(found.group()) == value:
            self._template = (data[:at], data[found.end() :], self._kind)

    @staticmethod
    def _pure_delta(chunk: dict[str, Any]) -> dict[str, Any] | None:
        """The delta of a chunk that carries one delta field and nothing else (no usage, no
        finish reason), else None."""
        choices = chunk.get("choices")
        if choices and chunk.get("usage") is None and "x_groq" not in chunk:
            choice = choices[0]
            if choice.get("finish_reason") is None and "usage" not in choice:
                delta = choice.get("delta")
                if delta and len(delta) == 1:
                    return delta
        return None

    def feed(self, chunk: dict[str, Any]) -> list[Any] | tuple[Any, ...]:
        """Events caused by one decoded chunk."""
        kind = self._kind
        if kind == "text" or kind == "tool":
            # Hot paths: one more piece of the open text block or of the open tool call's
            # arguments, nothing else in the chunk.
            delta = self._pure_delta(chunk)
            if delta is not None:
                if kind == "text":
                    content = delta.get("content")
                    if content and content.__class__ is str:
                        return (self.builder.text_delta(self._text_key, content),)
                else:
                    event = self._tool_fast(delta.get("tool_calls"))
                    if event is not None:
                        return (event,)
        return self._feed(chunk)

    def _tool_fast(self, calls: Any) -> Any:
        """The ``toolcall_delta`` for a chunk that only continues the open call's arguments (no id,
        no name, same index), or None to take the general path."""
        continued = _continued_call(calls)
        if continued is None:
            return None
        index, arguments = continued
        key = self._tool_keys.get(index) if index is not None else self._last_tool
        if key is None or key != self._last_tool or not self.builder.is_open(key):
            return None
        return self.builder.toolcall_delta(key, arguments)

    def _feed(self, chunk: dict[str, Any]) -> list[Any] | tuple[Any, ...]:
        if not self._saw_chunk:
            self._saw_chunk = True
            message = self.builder.message
            if chunk.get("id"):
                message.response_id = chunk["id"]
            if chunk.get("model"):
                message.response_model = chunk["model"]
        error = chunk.get("error")
        if error:
            text = error.get("message") if isinstance(error, dict) else str(error)
            raise StreamFailure(text or "Provider reported an error")
        usage = chunk.get("usage") or (chunk.get("x_groq") or {}).get("usage")  # Groq's own place
        if usage:
            self._usage(usage)
        choices = chunk.get("choices")
        if not choices:
            return ()
        choice = choices[0]
        delta = choice.get("delta")
        events: Any = self._delta(delta) if delta else ()
        if choice.get("usage"):
            self._usage(choice["usage"])
        reason = choice.get("finish_reason")
        if reason:
            self.finish_reason = reason
        return events

    def _usage(self, raw: dict[str, Any]) -> None:
        usage = self.builder.set_usage(usage_from(raw))
        if is_openrouter(self.builder.model):
            apply_reported_cost(usage, raw)

    def _text(self, content: str) -> tuple[Any, ...]:
        if self._kind != "text":
            self._kind = "text"
            self._seq += 1
            self._text_key = f"text{self._seq}"  # a str: its hash is cached, a tuple's is not
        return self.builder.text(self._text_key, content)

    def _thinking(self, piece: str, field: str) -> tuple[Any, ...]:
        if self._kind != "thinking":
            self._kind = "thinking"
            self._seq += 1
            self._thinking_key = f"thinking{self._seq}"
        return self.builder.thinking(self._thinking_key, piece, signature=field)

    def _delta(self, delta: dict[str, Any]) -> list[Any]:
        events: list[Any] = []
        for field in REASONING_FIELDS:
            piece = delta.get(field)
            if piece and isinstance(piece, str):
                events.extend(self._thinking(piece, field))
                break
        content = delta.get("content")
        if isinstance(content, list):
            # Mistral-style content chunks: text parts and thinking parts (with nested text).
            for part in content:
                if not isinstance(part, dict):
                    continue
                if part.get("type") == "thinking":
                    inner = part.get("thinking")
                    text = (
                        inner
                        if isinstance(inner, str)
                        else "".join(p.get("text", "") for p in inner or () if isinstance(p, dict))
                    )
                    if text:
                        events.extend(self._thinking(text, "reasoning_content"))
                elif part.get("type") == "text" and part.get("text"):
                    events.extend(self._text(part["text"]))
        elif content:
            events.extend(self._text(content))
        refusal = delta.get("refusal")
        if refusal and isinstance(refusal, str):
            events.extend(self._text(refusal))  # shown to the user like any answer text
        for call in delta.get("tool_calls") or ():
            events.extend(self._tool_delta(call))
        return events

    def _tool_delta(self, call: dict[str, Any]) -> tuple[Any, ...]:
        function = call.get("function") or {}
        call_id = call.get("id") or None
        name = function.get("name") or None
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, str):
            import json

            arguments = json.dumps(arguments)  # some servers send an object, not a string
        index = call.get("index")
        ident = index if index is not None else call_id
        key = self._tool_keys.get(ident) if ident is not None else self._last_tool
        if key is not None and call_id and self.builder.is_open(key):
            current = self.builder.block(key).id
            if current and current != call_id:
                key = None  # same index, new id: servers that send whole calls at index 0
        if key is None or not self.builder.is_open(key):
            self._seq += 1
            key = f"tool{self._seq}"
            if ident is not None:
                self._tool_keys[ident] = key
        self._last_tool = key
        self._kind = "tool"
        return self.builder.toolcall(key, arguments or "", id=call_id, name=name)

    def finish(self) -> list[Any]:
        """All ``*_end`` events in block order, then ``done`` or ``error``."""
        builder = self.builder
        has_tools = any(block.type == "toolCall" for block in builder.message.content)
        reason = self.finish_reason
        if reason is None:
            if self.compat.get("supportsFinishReason", True):
                return builder.done("error", error_message="Provider stream ended without a finish reason")
            return builder.done("toolUse" if has_tools else "stop")
        stop, error = map_finish_reason(reason)
        if stop == "stop" and has_tools:
            stop = "toolUse"  # servers (Ollama) that report "stop" after tool calls
        if error:
            return builder.done("error", raw=reason, error_message=error)
        return builder.done(stop, raw=reason)
