"""The ``openai-responses`` stream function (reference §3.5)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from pi_host.lib.llm.builder import MessageBuilder, guard
from pi_host.lib.llm.http import open_sse, run_request_hooks, stream_event_hook
from pi_provider_openai.responses_request import build_body
from pi_provider_openai.responses_stream import ResponsesParser
from pi_provider_openai.shared import auth_headers, endpoint, loads, output_cap, scrub_body, transform

API = "openai-responses"


def stream_responses(model: Any, context: Any, options: Any) -> AsyncIterator[Any]:
    builder = MessageBuilder(model, api=API, options=options)
    return guard(builder, _events(builder, model, context, options), options.signal)


def prepare(
    model: Any, context: Any, options: Any, **variant: Any
) -> tuple[str, dict[str, Any], dict[str, str]]:
    """(url, body, headers) for a request; pure, for tests. ``variant``: :func:`build_body`'s
    per-API settings (Azure's)."""
    flags = dict(model.compat or {})
    messages = transform(model, context.messages)
    cap = output_cap(model, messages, options)
    body = scrub_body(build_body(model, messages, context.tools, options, flags, cap, **variant))
    return endpoint(model.base_url, "/responses"), body, auth_headers(model, options)


def record_effort(builder: MessageBuilder, body: dict[str, Any]) -> None:
    """Keep on the reply the level its ``configuration_update`` carried, so the next request
    can restate it before this reply (pi's ``providerThinkingLevel``)."""
    items = body.get("input") or ()
    if items and isinstance(items[-1], dict) and items[-1].get("type") == "configuration_update":
        builder.message.provider_thinking_level = items[-1]["reasoning"]["effort"]


async def _events(builder: MessageBuilder, model: Any, context: Any, options: Any) -> AsyncIterator[Any]:
    url, body, headers = prepare(model, context, options)
    record_effort(builder, body)
    async with aclosing(send(builder, url, body, headers, options)) as events:  # closed with us
        async for event in events:
            yield event


async def send(
    builder: MessageBuilder, url: str, body: dict[str, Any], headers: dict[str, str], options: Any
) -> AsyncIterator[Any]:
    """Run the request hooks, send the request and turn the answer into events (Azure's
    Responses API shares this with OpenAI's)."""
    body = await run_request_hooks(options, body, headers)
    async with open_sse(url, body=body, headers=headers, options=options) as response:
        yield builder.start()
        parser = ResponsesParser(builder)
        feed = parser.feed
        emit = stream_event_hook(options)
        async for batch in response.batches():
            for _name, data in batch:
                if data == b"[DONE]":
                    continue
                chunk = loads(data)
                if emit is not None:
                    await emit(chunk)
                for event in feed(chunk):
                    yield event
                if parser.status is not None:
                    break
            if parser.status is not None:
                break
        for event in parser.finish():
            yield event
