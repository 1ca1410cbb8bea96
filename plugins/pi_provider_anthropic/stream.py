"""Streaming a Messages API response into AssistantMessageEvents.

Each content block is keyed by Anthropic's block ``index`` and ends at its own
``content_block_stop``; usage comes from ``message_start`` and is updated by ``message_delta``.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import orjson

from pi_host.lib.llm import strict_tool_limits as limits
from pi_host.lib.llm.builder import MessageBuilder, guard
from pi_host.lib.llm.errors import ProviderHTTPError
from pi_host.lib.llm.http import open_sse, request_headers, run_request_hooks, stream_event_hook
from pi_host.lib.llm.usage import apply_reported_cost, is_openrouter
from pi_provider_anthropic.convert import (
    REDACTED_PLACEHOLDER,
    build_request,
    endpoint,
    is_oauth_key,
    restore_tool_name,
)

loads = orjson.loads

STOP_REASONS = {
    "end_turn": "stop",
    "pause_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "toolUse",
}
REFUSALS = {
    "refusal": "The model refused to answer (stop reason: refusal)",
    "sensitive": "The response was stopped because it touched sensitive content (stop reason: sensitive)",
}


def _block_start(builder: MessageBuilder, event: dict[str, Any], context: Any, oauth: bool) -> list[Any]:
    index = event.get("index", 0)
    block = event.get("content_block") or {}
    btype = block.get("type")
    out: list[Any] = []
    if btype == "text":
        out.append(builder.text_start(index))
        if block.get("text"):
            out.append(builder.text_delta(index, block["text"]))
    elif btype == "thinking":
        out.append(builder.thinking_start(index, signature=block.get("signature") or None))
        if block.get("thinking"):
            out.append(builder.thinking_delta(index, block["thinking"]))
    elif btype == "redacted_thinking":
        out.append(builder.thinking_start(index, signature=block.get("data", ""), redacted=True))
        out.append(builder.thinking_delta(index, REDACTED_PLACEHOLDER))
    elif btype in ("tool_use", "server_tool_use"):
        name = restore_tool_name(block.get("name", ""), context, oauth)
        out.append(builder.toolcall_start(index, id=block.get("id", ""), name=name))
        initial = block.get("input")
        if isinstance(initial, dict) and initial:
            out.append(builder.toolcall_delta(index, orjson.dumps(initial).decode()))
    return out


def stream(model: Any, context: Any, options: Any):
    builder = MessageBuilder(model, options=options)
    return guard(builder, _run(builder, model, context, options), options.signal)


def _usage(builder: MessageBuilder, usage: dict[str, Any], start: bool = False) -> None:
    """``message_start`` sets every count (``cacheWrite1h`` included, 0 when absent);
    ``message_delta`` updates only the counts it carries, and ``reasoning`` comes only from its
    ``output_tokens_details.thinking_tokens``. OpenRouter's billed cost replaces the total."""
    cache_1h = (usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens")
    if start:
        cache_1h = cache_1h or 0
    builder.message.usage.cost.total_from_provider = False  # priced again below, as pi does on each event
    thinking = (usage.get("output_tokens_details") or {}).get("thinking_tokens")
    names = {
        "input": "input_tokens",
        "output": "output_tokens",
        "cache_read": "cache_read_input_tokens",
        "cache_write": "cache_creation_input_tokens",
    }
    counts = {ours: usage.get(theirs) for ours, theirs in names.items()}
    if start:  # absent counts are 0 at the start; later events leave them as they are
        counts = {name: value or 0 for name, value in counts.items()}
    priced = builder.set_usage(cache_write_1h=cache_1h, reasoning=thinking, **counts)
    if usage and not start and is_openrouter(builder.model):
        apply_reported_cost(priced, usage)


async def _run(builder: MessageBuilder, model: Any, context: Any, options: Any):
    api_key = options.api_key or os.environ.get("ANTHROPIC_API_KEY")
    oauth = is_oauth_key(api_key)
    plain_preferred = limits.over_limits(options.session_id)
    async with contextlib.AsyncExitStack() as stack:
        while True:
            preferred: list[bool] = []
            body, headers = build_request(model, context, options, api_key, plain_preferred, preferred)
            last = body["messages"][-1] if body["messages"] else {}
            if last.get("role") == "system" and "output_config" in last:
                # the effort this reply is made with, restated before it in later requests
                builder.message.provider_thinking_level = last["output_config"]["effort"]
            headers = request_headers(model, options, headers)
            body = await run_request_hooks(options, body, headers)
            try:
                response = await stack.enter_async_context(
                    open_sse(endpoint(model), body=body, headers=headers, options=options)
                )
                break
            except ProviderHTTPError as exc:
                # Claude refused the strict tools as over its limits: once more with the tools that
                # only prefer strict sampling sent plain, and not again for this session (tools.py)
                refusal = _strict_limit_refusal(exc)
                if plain_preferred or not any(preferred) or refusal is None:
                    raise
                plain_preferred = True
                limits.mark_over_limits(options.session_id)
                builder.add_diagnostic(limits.fallback_diagnostic("anthropic", refusal))
        async for item in _events(builder, response, context, options, oauth):
            yield item


def _strict_limit_refusal(exc: ProviderHTTPError) -> str | None:
    """The API's message when ``exc`` refuses the strict tools as over Claude's limits."""
    if exc.status != 400:
        return None
    try:
        error = orjson.loads(exc.body or "{}").get("error") or {}
    except (orjson.JSONDecodeError, AttributeError):
        return None
    message = str(error.get("message", ""))
    return (
        message if error.get("type") == "invalid_request_error" and limits.is_limit_error(message) else None
    )


async def _events(builder: MessageBuilder, response: Any, context: Any, options: Any, oauth: bool):
    """The message's events from the open stream."""
    message = builder.message
    stop_seen = False
    emit = stream_event_hook(options)
    yield builder.start()
    async for batch in response.batches():
        for name, data in batch:
            event = loads(data)
            if emit is not None:
                await emit(event)
            kind = event.get("type") or name.decode()
            if kind == "content_block_delta":
                delta = event["delta"]
                dtype = delta.get("type")
                index = event.get("index", 0)
                if dtype == "text_delta":
                    yield builder.text_delta(index, delta.get("text", ""))
                elif dtype == "input_json_delta":
                    yield builder.toolcall_delta(index, delta.get("partial_json", ""))
                elif dtype == "thinking_delta":
                    yield builder.thinking_delta(index, delta.get("thinking", ""))
                elif dtype == "signature_delta":
                    builder.add_signature(index, delta.get("signature", ""))
                # citations_delta and unknown deltas carry nothing the protocol keeps
            elif kind == "content_block_start":
                for item in _block_start(builder, event, context, oauth):
                    yield item
            elif kind == "content_block_stop":
                ended = builder.end(event.get("index", 0))
                if ended is not None:
                    yield ended
            elif kind == "message_start":
                info = event.get("message") or {}
                message.response_id = info.get("id")
                if info.get("model"):
                    message.response_model = info["model"]
                _usage(builder, info.get("usage") or {}, start=True)
            elif kind == "message_delta":
                delta = event.get("delta") or {}
                if delta.get("stop_reason"):
                    message.raw_stop_reason = delta["stop_reason"]
                _usage(builder, event.get("usage") or {})
            elif kind == "message_stop":
                stop_seen = True
                break
            elif kind == "error":
                err = event.get("error") or {}
                text = err.get("message") or "unknown error"
                etype = err.get("type")
                yield builder.fail(f"{etype}: {text}" if etype else text)
                return
            # ping and unknown events are ignored
        if stop_seen:
            break
    if not stop_seen:
        yield builder.fail("Anthropic stream ended before message_stop (connection closed early)")
        return
    raw = message.raw_stop_reason
    if raw in REFUSALS:
        for event in builder.done("error", raw=raw, error_message=REFUSALS[raw]):
            yield event
        return
    mapped = STOP_REASONS.get(raw or "end_turn")
    if mapped is None:
        for event in builder.done(
            "error", raw=raw, error_message=f"Unexpected stop reason from Anthropic: {raw}"
        ):
            yield event
        return
    for event in builder.done(mapped, raw=raw):
        yield event
