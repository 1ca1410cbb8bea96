"""The ``openai-completions`` stream function: request, HTTP, SSE, events (reference §3.4)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from itertools import chain
from operator import itemgetter
from typing import Any

from pi_host.lib.llm.builder import EventBatch, MessageBuilder, guard
from pi_host.lib.llm.http import open_sse, run_request_hooks, stream_event_hook
from pi_provider_openai import compat as compat_flags
from pi_provider_openai.completions_request import build_body
from pi_provider_openai.completions_stream import DONE, CompletionsParser
from pi_provider_openai.shared import (
    auth_headers,
    endpoint,
    loads,
    mistral_tool_id,
    output_cap,
    scrub_body,
    transform,
)

API = "openai-completions"
second = itemgetter(1)


def stream_completions(model: Any, context: Any, options: Any) -> AsyncIterator[Any]:
    builder = MessageBuilder(model, api=API, options=options)
    return guard(builder, _events(builder, model, context, options), options.signal)


def prepare(
    model: Any, context: Any, options: Any
) -> tuple[str, dict[str, Any], dict[str, str], dict[str, Any]]:
    """(url, body, headers, compat) for a request; pure, for tests and the benchmark."""
    flags = compat_flags.resolve(model)
    messages = transform(
        model, context.messages, mistral_tool_id if flags.get("requiresMistralToolIds") else "auto"
    )
    body = scrub_body(
        build_body(model, messages, context.tools, options, flags, output_cap(model, messages, options))
    )
    headers = auth_headers(model, options)
    affinity = flags.get("sessionAffinityHeader")
    if affinity and options.session_id:
        headers.setdefault(affinity, options.session_id)
    return endpoint(model.base_url, "/chat/completions"), body, headers, flags


async def _events(builder: MessageBuilder, model: Any, context: Any, options: Any) -> AsyncIterator[Any]:
    url, body, headers, flags = prepare(model, context, options)
    body = await run_request_hooks(options, body, headers)
    async with open_sse(url, body=body, headers=headers, options=options) as response:
        yield builder.start()
        parser = CompletionsParser(builder, flags)
        feed, feed_raw = parser.feed, parser.feed_raw
        emit = stream_event_hook(options)
        async for batch in response.batches():
            if emit is None:
                # Pulled by the guard one event at a time (a chunk is decoded when its turn
                # comes), without a Python generator step per chunk.
                yield EventBatch(chain.from_iterable(map(feed_raw, map(second, batch))))
            else:  # a plugin sees each raw chunk before its events: one at a time
                for _name, data in batch:
                    if data == DONE:
                        parser.done = True
                        break
                    chunk = loads(data)
                    await emit(chunk)
                    for event in feed(chunk):
                        yield event
            if parser.done:
                break
        for event in parser.finish():
            yield event
