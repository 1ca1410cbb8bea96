"""The ``google-generative-ai`` stream function and chunk parser (reference §2, §3.6).

Each SSE event is a whole ``GenerateContentResponse``. Parts with ``thought: true`` are thinking;
other text parts are text; a ``functionCall`` part is a complete tool call (one
``toolcall_delta`` with all arguments). A block ends when a part of another kind arrives, so
Gemini blocks end as they go, not all at the end. ``thoughtSignature`` values land on the block
they came with (an empty text part that only carries a signature goes to the last block).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

import orjson

from pi_host.lib.llm.builder import MessageBuilder, guard, sign_block
from pi_host.lib.llm.http import (
    open_sse,
    request_headers,
    run_request_hooks,
    stream_event_hook,
    user_agent,
)
from pi_host.lib.llm.tokens import clamp_max_tokens
from pi_host.lib.llm.transform import scrub_body, transform_messages
from pi_host.protocol import Cost, Usage
from pi_provider_google.request import build_body

API = "google-generative-ai"

_FINISH = {"STOP": "stop", "MAX_TOKENS": "length"}


class StreamFailure(Exception):
    pass


def usage_from(raw: dict[str, Any]) -> Usage:
    """``output`` includes the thought tokens, which are also ``reasoning`` (always set, 0 when not
    reported)."""
    cached = raw.get("cachedContentTokenCount") or 0
    thoughts = raw.get("thoughtsTokenCount") or 0
    return Usage(
        input=max(0, (raw.get("promptTokenCount") or 0) - cached),
        output=(raw.get("candidatesTokenCount") or 0) + thoughts,
        cache_read=cached,
        reasoning=thoughts,
        cost=Cost(total_from_provider=False),
    )


class GoogleParser:
    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.finish_reason: str | None = None
        self.block_reason: str | None = None
        self._current: Any = None
        self._kind = ""
        self._seq = 0
        self._last_block: Any = None

    def _close(self) -> list[Any]:
        if self._current is None:
            return []
        event = self.builder.end(self._current)
        self._current = None
        self._kind = ""
        return [event] if event is not None else []

    def _open(self, kind: str) -> tuple[list[Any], Any]:
        if self._kind == kind and self._current is not None:
            return [], self._current
        events = self._close()
        self._seq += 1
        key = (kind, self._seq)
        self._current = key
        self._kind = kind
        return events, key

    def feed(self, chunk: dict[str, Any]) -> list[Any]:
        message = self.builder.message
        if chunk.get("responseId") and not message.response_id:
            message.response_id = chunk["responseId"]
        if chunk.get("modelVersion") and not message.response_model:
            message.response_model = chunk["modelVersion"]
        if chunk.get("error"):
            error = chunk["error"]
            raise StreamFailure(error.get("message") if isinstance(error, dict) else str(error))
        if chunk.get("usageMetadata"):
            self.builder.set_usage(usage_from(chunk["usageMetadata"]))
        feedback = chunk.get("promptFeedback") or {}
        if feedback.get("blockReason"):
            self.block_reason = feedback["blockReason"]
        events: list[Any] = []
        for candidate in (chunk.get("candidates") or ())[:1]:
            for part in (candidate.get("content") or {}).get("parts") or ():
                events.extend(self._part(part))
            if candidate.get("finishReason"):
                self.finish_reason = candidate["finishReason"]
        return events

    def _part(self, part: dict[str, Any]) -> list[Any]:
        builder = self.builder
        signature = part.get("thoughtSignature")
        call = part.get("functionCall")
        if call is not None:
            events = self._close()
            self._seq += 1
            key = ("tool", self._seq)
            name = call.get("name") or ""
            call_id = call.get("id") or f"{name}_{uuid.uuid4().hex[:12]}"
            args = call.get("args") or {}
            events.append(builder.toolcall_start(key, id=call_id, name=name))
            events.append(builder.toolcall_delta(key, json.dumps(args, ensure_ascii=False)))
            if signature:
                builder.set_signature(key, signature)
            events.append(builder.toolcall_end(key, args if isinstance(args, dict) else {}))
            self._last_block = events[-1].tool_call
            return events
        text = part.get("text")
        if text is None or text == "":
            if signature:
                self._attach_signature(signature)
            return []
        kind = "thinking" if part.get("thought") else "text"
        events, key = self._open(kind)
        if kind == "thinking":
            events.extend(builder.thinking(key, text))
        else:
            events.extend(builder.text(key, text))
        self._last_block = builder.block(key)
        if signature:
            builder.set_signature(key, signature)
        return events

    def _attach_signature(self, signature: str) -> None:
        if self._last_block is not None:
            sign_block(self._last_block, signature)

    def finish(self) -> list[Any]:
        builder = self.builder
        events = self._close()
        has_tools = any(block.type == "toolCall" for block in builder.message.content)
        reason = self.finish_reason
        if reason is None:
            if self.block_reason:
                return events + builder.done(
                    "error",
                    raw=self.block_reason,
                    error_message=f"Prompt blocked by the provider: {self.block_reason}",
                )
            return events + builder.done(
                "error", error_message="Provider stream ended without a finish reason"
            )
        mapped = _FINISH.get(reason)
        if mapped is None:
            return events + builder.done(
                "error", raw=reason, error_message=f"Provider finish reason: {reason}"
            )
        if mapped == "stop" and has_tools:
            mapped = "toolUse"
        return events + builder.done(mapped, raw=reason)


def request_body(model: Any, context: Any, options: Any) -> dict[str, Any]:
    messages = transform_messages(context.messages, model)
    cap = clamp_max_tokens(model, messages, options.max_tokens or None)
    return scrub_body(build_body(model, messages, context.tools, options, cap))


def prepare(model: Any, context: Any, options: Any) -> tuple[str, dict[str, Any], dict[str, str]]:
    """(url, body, headers) for a request; pure, for tests."""
    body = request_body(model, context, options)
    url = f"{model.base_url.rstrip('/')}/models/{model.id}:streamGenerateContent?alt=sse"
    base = {"user-agent": user_agent()}
    if options.api_key:
        base["x-goog-api-key"] = options.api_key
    headers = request_headers(model, options, base)
    return url, body, headers


def stream_google(model: Any, context: Any, options: Any) -> AsyncIterator[Any]:
    builder = MessageBuilder(model, api=API, options=options)
    return guard(builder, _events(builder, model, context, options), options.signal)


async def _events(builder: MessageBuilder, model: Any, context: Any, options: Any) -> AsyncIterator[Any]:
    url, body, headers = prepare(model, context, options)
    async with aclosing(send(builder, url, body, headers, options)) as events:  # closed with us
        async for event in events:
            yield event


async def send(
    builder: MessageBuilder, url: str, body: dict[str, Any], headers: dict[str, str], options: Any
) -> AsyncIterator[Any]:
    """Run the request hooks, send the request and turn the answer into events (Vertex AI
    shares this with the Gemini API)."""
    body = await run_request_hooks(options, body, headers)
    async with open_sse(url, body=body, headers=headers, options=options) as response:
        yield builder.start()
        parser = GoogleParser(builder)
        emit = stream_event_hook(options)
        async for batch in response.batches():
            for _name, data in batch:
                chunk = orjson.loads(data)
                if emit is not None:
                    await emit(chunk)
                for event in parser.feed(chunk):
                    yield event
        for event in parser.finish():
            yield event
