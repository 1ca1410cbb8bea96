"""Turning Responses API stream events into host events (reference §2, §3.5).

Blocks are keyed by output item id (falling back to ``output_index``) and end at their own
``response.output_item.done``: a reasoning item ends as thinking whose ``thinkingSignature`` is
the serialized item (with ``encrypted_content``) so it can be replayed; a message ends as text
whose ``textSignature`` is the item id; a function call ends as a tool call with id
``call_id|item_id``.
"""

from __future__ import annotations

import json
from typing import Any

from pi_host.lib.llm.partial_json import parse_final
from pi_host.protocol import Usage
from pi_provider_openai.responses_request import text_signature


class StreamFailure(Exception):
    pass


def usage_from(raw: dict[str, Any]) -> Usage:
    """``input`` excludes cached and cache-write tokens (OpenAI counts both in
    ``input_tokens``); ``reasoning`` is always set (0 when not reported)."""
    details = raw.get("input_tokens_details") or {}
    cached = details.get("cached_tokens") or 0
    cache_write = details.get("cache_write_tokens") or 0
    return Usage(
        input=max(0, (raw.get("input_tokens") or 0) - cached - cache_write),
        output=raw.get("output_tokens") or 0,
        cache_read=cached,
        cache_write=cache_write,
        reasoning=(raw.get("output_tokens_details") or {}).get("reasoning_tokens") or 0,
    )


class ResponsesParser:
    def __init__(self, builder: Any) -> None:
        self.builder = builder
        self.status: str | None = None
        self.incomplete_reason: str | None = None
        self.failure: str | None = None
        self._keys: dict[Any, Any] = {}  # output_index -> key (item id)
        self._summary_seen: dict[Any, set[int]] = {}
        self._handlers = {
            "response.created": self._created,
            "response.in_progress": self._created,
            "response.output_item.added": self._item_added,
            "response.output_item.done": self._item_done,
            "response.reasoning_summary_part.added": self._summary_part,
            "response.reasoning_summary_text.delta": self._reasoning_delta,
            "response.reasoning_text.delta": self._reasoning_delta,
            "response.output_text.delta": self._text_delta,
            "response.refusal.delta": self._text_delta,
            "response.function_call_arguments.delta": self._args_delta,
            "response.completed": self._finished,
            "response.done": self._finished,  # the Codex backend's name for it
            "response.incomplete": self._finished,
            "response.failed": self._finished,
            "response.cancelled": self._finished,
            "error": self._error,
        }

    def feed(self, event: dict[str, Any]) -> Any:
        handler = self._handlers.get(event.get("type", ""))
        return handler(event) if handler is not None else ()

    # --- helpers ---------------------------------------------------------------------------------

    def _key(self, event: dict[str, Any]) -> Any:
        item_id = event.get("item_id")
        if item_id:
            return item_id
        return self._keys.get(event.get("output_index"), ("index", event.get("output_index")))

    # --- handlers --------------------------------------------------------------------------------

    def _created(self, event: dict[str, Any]) -> tuple[Any, ...]:
        response = event.get("response") or {}
        message = self.builder.message
        if response.get("id") and not message.response_id:
            message.response_id = response["id"]
        if response.get("model") and not message.response_model:
            message.response_model = response["model"]
        return ()

    def _item_added(self, event: dict[str, Any]) -> tuple[Any, ...]:
        item = event.get("item") or {}
        key = item.get("id") or ("index", event.get("output_index"))
        self._keys[event.get("output_index")] = key
        kind = item.get("type")
        builder = self.builder
        if builder.is_open(key):
            return ()
        if kind == "reasoning":
            return (builder.thinking_start(key),)
        if kind == "message":
            return (builder.text_start(key),)
        if kind == "function_call":
            call_id = item.get("call_id") or ""
            item_id = item.get("id")
            ident = f"{call_id}|{item_id}" if item_id else call_id
            events = [builder.toolcall_start(key, id=ident, name=item.get("name") or "")]
            if item.get("arguments"):
                events.append(builder.toolcall_delta(key, item["arguments"]))
            return tuple(events)
        return ()

    def _summary_part(self, event: dict[str, Any]) -> tuple[Any, ...]:
        key = self._key(event)
        seen = self._summary_seen.setdefault(key, set())
        index = event.get("summary_index", 0)
        first = not seen
        seen.add(index)
        if not first and self.builder.is_open(key):
            return (self.builder.thinking_delta(key, "\n\n"),)  # parts of one summary, as paragraphs
        return ()

    def _reasoning_delta(self, event: dict[str, Any]) -> Any:
        delta = event.get("delta") or ""
        if not delta:
            return ()
        return self.builder.thinking(self._key(event), delta)

    def _text_delta(self, event: dict[str, Any]) -> Any:
        delta = event.get("delta") or ""
        if not delta:
            return ()
        return self.builder.text(self._key(event), delta)

    def _args_delta(self, event: dict[str, Any]) -> Any:
        return self.builder.toolcall(self._key(event), event.get("delta") or "")

    def _item_done(self, event: dict[str, Any]) -> tuple[Any, ...]:
        item = event.get("item") or {}
        key = item.get("id") or self._keys.get(event.get("output_index"))
        kind = item.get("type")
        builder = self.builder
        if kind == "reasoning":
            summary = "\n\n".join(part.get("text", "") for part in item.get("summary") or ())
            if not summary:
                summary = "\n\n".join(part.get("text", "") for part in item.get("content") or ())
            signature = json.dumps(item, ensure_ascii=False, separators=(",", ":"))
            if not builder.is_open(key):
                builder.thinking_start(key)  # a reasoning item that streamed no event before
            return (builder.thinking_end(key, summary, signature=signature),)
        if kind == "message":
            text = "".join(
                part.get("text") or part.get("refusal") or "" for part in item.get("content") or ()
            )
            signature = text_signature(item.get("id"), item.get("phase"))
            if not builder.is_open(key):
                if not text:
                    return ()
                builder.text_start(key)
            return (builder.text_end(key, text, signature=signature),)
        if kind == "function_call":
            call_id = item.get("call_id") or ""
            item_id = item.get("id")
            events: list[Any] = []
            if not builder.is_open(key):
                events.append(
                    builder.toolcall_start(
                        key, id=f"{call_id}|{item_id}" if item_id else call_id, name=item.get("name") or ""
                    )
                )
            block = builder.block(key)
            if not block.name and item.get("name"):
                block.name = item["name"]
            streamed = builder.toolcall_arguments_text(key)
            final = item.get("arguments")
            arguments = None
            if isinstance(final, str) and final != streamed:
                parsed, error = parse_final(final)
                if error is None:
                    arguments = parsed
            events.append(builder.toolcall_end(key, arguments))
            return tuple(events)
        return ()

    def _finished(self, event: dict[str, Any]) -> tuple[Any, ...]:
        response = event.get("response") or {}
        self._created(event)
        self.status = response.get("status") or event.get("type", "").rsplit(".", 1)[-1]
        if response.get("usage"):
            self.builder.set_usage(usage_from(response["usage"]))
        # pi prices every finished response, with or without usage: the flag is always written.
        self.builder.message.usage.cost.total_from_provider = False
        details = response.get("incomplete_details") or {}
        self.incomplete_reason = details.get("reason")
        error = response.get("error")
        if error:
            self.failure = error.get("message") or error.get("code") or "Response failed"
        return ()

    def _error(self, event: dict[str, Any]) -> tuple[Any, ...]:
        code = event.get("code")
        message = event.get("message") or "Provider reported an error"
        raise StreamFailure(f"{code}: {message}" if code else message)

    def finish(self) -> list[Any]:
        builder = self.builder
        has_tools = any(block.type == "toolCall" for block in builder.message.content)
        status = self.status
        if status is None:
            return builder.done("error", error_message="Provider stream ended before the response completed")
        if status == "completed":
            return builder.done("toolUse" if has_tools else "stop", raw=status)
        if status == "incomplete":
            reason = self.incomplete_reason or "unknown"
            if reason == "max_output_tokens":
                return builder.done("length", raw=reason)
            return builder.done("error", raw=reason, error_message=f"Response incomplete: {reason}")
        return builder.done("error", raw=status, error_message=self.failure or f"Response {status}")
