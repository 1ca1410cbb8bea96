"""The ``bedrock-converse-stream`` stream function: POST
``<endpoint>/model/<model id>/converse-stream`` (the id URL-encoded: inference-profile ARNs hold
``:`` and ``/``), the answer an AWS event stream (:mod:`pi_provider_bedrock.eventstream`) of
``messageStart``, ``contentBlockStart`` (tool uses), ``contentBlockDelta`` (text, tool input,
reasoning text / signature / redacted content), ``contentBlockStop``, ``messageStop`` and
``metadata`` (usage) events; ``exception`` messages end the stream with an error whose text
starts as pi's (``Throttling error: ...``) so retry and overflow rules match the same words.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, aclosing
from typing import Any
from urllib.parse import quote

import orjson

from pi_host.lib.llm import strict_tool_limits as limits
from pi_host.lib.llm.builder import MessageBuilder, guard
from pi_host.lib.llm.errors import ProviderHTTPError
from pi_host.lib.llm.http import open_sse, request_headers, run_request_hooks, stream_event_hook, user_agent
from pi_provider_bedrock import auth, tools
from pi_provider_bedrock.eventstream import Decoder
from pi_provider_bedrock.request import build_body

API = "bedrock-converse-stream"
REDACTED = "[Reasoning redacted]"
_STOP = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
}
_PREFIX = {
    "internalServerException": "Internal server error",
    "modelStreamErrorException": "Model stream error",
    "validationException": "Validation error",
    "throttlingException": "Throttling error",
    "serviceUnavailableException": "Service unavailable",
}


class BedrockStreamError(Exception):
    pass


def _reserved(name: str) -> bool:
    # Signed or owned by the auth scheme: a configured header must not replace them.
    lower = name.lower()
    return lower.startswith("x-amz-") or lower in ("authorization", "host")


def prepare(
    model: Any, context: Any, options: Any, tools: dict[str, Any] | None = None
) -> tuple[str, dict[str, Any], dict[str, str], str]:
    """(url, body, unsigned headers, signing region); pure apart from reading a profile's region.
    ``tools``: the ``toolConfig`` to send, else the context's tools as they ask."""
    region = auth.region_for(model, options, auth.profile_region(options))
    url = f"{auth.endpoint(model, options, region)}/model/{quote(model.id, safe='')}/converse-stream"
    headers = {
        k: v
        for k, v in request_headers(model, options, {"user-agent": user_agent()}).items()
        if not _reserved(k)
    }
    headers.update({"content-type": "application/json", "accept": "application/vnd.amazon.eventstream"})
    return url, build_body(model, context, options, region, tools), headers, region


def stream_bedrock(model: Any, context: Any, options: Any) -> AsyncIterator[Any]:
    builder = MessageBuilder(model, api=API, options=options)
    return guard(builder, _events(builder, model, context, options), options.signal)


class ConverseParser:
    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.stop: str | None = None
        self._redacted: dict[int, list[bytes]] = {}

    def feed(self, kind: str, data: dict[str, Any]) -> list[Any]:
        builder = self.builder
        if kind == "contentBlockStart":
            tool = (data.get("start") or {}).get("toolUse")
            if tool:
                key = data.get("contentBlockIndex", 0)
                return [
                    builder.toolcall_start(key, id=tool.get("toolUseId") or "", name=tool.get("name") or "")
                ]
        elif kind == "contentBlockDelta":
            return self._delta(data.get("contentBlockIndex", 0), data.get("delta") or {})
        elif kind == "contentBlockStop":
            key = data.get("contentBlockIndex", 0)
            if not builder.is_open(key):
                return []
            chunks = self._redacted.pop(key, None)
            if chunks:
                builder.set_signature(key, base64.b64encode(b"".join(chunks)).decode())
            event = builder.end(key)
            return [event] if event is not None else []
        elif kind == "messageStop":
            self.stop = data.get("stopReason") or ""
        elif kind == "metadata":
            usage = data.get("usage") or {}
            if usage:
                builder.set_usage(
                    input=usage.get("inputTokens") or 0,
                    output=usage.get("outputTokens") or 0,
                    cache_read=usage.get("cacheReadInputTokens") or 0,
                    cache_write=usage.get("cacheWriteInputTokens") or 0,
                )
        elif kind.endswith("Exception"):
            raise BedrockStreamError(f"{_PREFIX.get(kind, kind)}: {data.get('message', '')}")
        return []

    def _delta(self, key: int, delta: dict[str, Any]) -> list[Any]:
        builder = self.builder
        if "text" in delta:
            return list(builder.text(key, delta["text"]))
        if "toolUse" in delta:
            if not builder.is_open(key):
                return []
            return [builder.toolcall_delta(key, (delta["toolUse"] or {}).get("input") or "")]
        reasoning = delta.get("reasoningContent")
        if not reasoning:
            return []
        events: list[Any] = []
        redacted = reasoning.get("redactedContent")
        if not builder.is_open(key):
            events.append(builder.thinking_start(key, redacted=bool(redacted)))
        if reasoning.get("text"):
            events.append(builder.thinking_delta(key, reasoning["text"]))
        if reasoning.get("signature") and key not in self._redacted:
            builder.add_signature(key, reasoning["signature"])
        if redacted:
            if key not in self._redacted:
                self._redacted[key] = []
                events.append(builder.thinking_delta(key, REDACTED))
            self._redacted[key].append(base64.b64decode(redacted))
        return events

    def finish(self) -> list[Any]:
        builder = self.builder
        events = builder.end_all()
        if self.stop is None:
            return events + builder.done("error", error_message="Bedrock stream ended without a stop reason")
        mapped = _STOP.get(self.stop)
        if mapped is None:
            return events + builder.done(
                "error", raw=self.stop, error_message=f"Provider stopped with: {self.stop}"
            )
        return events + builder.done(mapped, raw=self.stop)


async def _events(builder: MessageBuilder, model: Any, context: Any, options: Any) -> AsyncIterator[Any]:
    try:
        async with aclosing(_converse(builder, model, context, options)) as events:  # closed with us
            async for event in events:
                yield event
    except (BedrockStreamError, auth.CredentialsError) as exc:  # texts meant to be read as they are
        yield builder.fail(str(exc))


async def _open(
    builder: MessageBuilder, model: Any, context: Any, options: Any, stack: AsyncExitStack
) -> Any:
    """The open response. Claude on Bedrock refuses strict tools over its limits before the
    stream starts, so sending once more with the preferring tools plain repeats no output."""
    plain_preferred = limits.over_limits(options.session_id)
    while True:
        tool_config, preferred_strict = tools.convert_tools(
            context.tools, tools.supports_strict(model), plain_preferred
        )
        url, body, headers, region = prepare(model, context, options, tool_config)
        body = await run_request_hooks(options, body, headers)
        content = orjson.dumps(body)
        headers = await auth.authorize(url, content, headers, options, region)
        try:
            return await stack.enter_async_context(
                open_sse(url, body=content, headers=headers, options=options)
            )
        except ProviderHTTPError as exc:
            refusal = tools.limit_refusal(exc)
            if plain_preferred or not preferred_strict or refusal is None:
                raise
            plain_preferred = True
            limits.mark_over_limits(options.session_id)  # later requests of the session start plain
            builder.add_diagnostic(limits.fallback_diagnostic("bedrock", refusal))


async def _converse(builder: MessageBuilder, model: Any, context: Any, options: Any) -> AsyncIterator[Any]:
    async with AsyncExitStack() as stack:
        response = await _open(builder, model, context, options, stack)
        yield builder.start()
        decoder = Decoder()
        parser = ConverseParser(builder)
        emit = stream_event_hook(options)
        async for chunk in response.response.aiter_bytes():
            for message_headers, payload in decoder.feed(chunk):
                kind = message_headers.get(":message-type")
                if kind == "error":
                    code = message_headers.get(":error-code", "Error")
                    raise BedrockStreamError(f"{code}: {message_headers.get(':error-message', '')}")
                name = message_headers.get(":event-type") or message_headers.get(":exception-type") or ""
                if kind == "exception" and not name.endswith("Exception"):
                    name += "Exception"
                data = orjson.loads(payload) if payload else {}
                if emit is not None:
                    await emit({name: data})
                for event in parser.feed(name, data):
                    yield event
        if decoder.pending:
            raise BedrockStreamError("Bedrock stream ended in the middle of a message")
    for event in parser.finish():
        yield event
