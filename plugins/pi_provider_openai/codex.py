"""The ``openai-codex-responses`` stream function: the Responses API as ChatGPT's Codex backend
serves it to a ChatGPT Plus/Pro login (provider ``openai-codex``; facts from pi 1.6.0).

Differences from ``openai-responses``, all from pi: the URL is ``<baseUrl>/codex/responses``; the
OAuth access token goes as ``Authorization: Bearer`` with ``chatgpt-account-id`` (the token's
``chatgpt_account_id`` claim), ``OpenAI-Beta: responses=experimental``, ``originator: pi`` and the
session id as ``session-id`` / ``x-client-request-id``; the body always asks for encrypted
reasoning, low text verbosity, ``tool_choice: auto`` and parallel tool calls, and tools carry no
``strict``; ``response.done`` ends a response like ``response.completed``.

Transports (pi's ``transport`` setting; ``auto`` by default): a WebSocket to the same URL first
(:mod:`pi_provider_openai.codex_ws`, :mod:`pi_provider_openai.codex_stream`), then SSE for the
rest of the session if the socket fails before the answer started; ``sse`` goes straight to SSE.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from pi_host.lib.llm.builder import MessageBuilder, guard
from pi_provider_openai.codex_ws import (  # re-exported: the URLs and ids are the API's
    DEFAULT_BASE_URL,
    cache_session_id,
    codex_url,
    websocket_headers,
    websocket_url,
)
from pi_provider_openai.responses import record_effort
from pi_provider_openai.responses_request import build_body
from pi_provider_openai.shared import auth_headers, output_cap, scrub_body, transform

API = "openai-codex-responses"
__all__ = [
    "DEFAULT_BASE_URL",
    "cache_session_id",
    "codex_url",
    "prepare",
    "stream_codex",
    "websocket_headers",
    "websocket_url",
]


def account_id(api_key: str | None) -> str:
    """The ChatGPT account id in the access token; ``ValueError`` when it is not such a token."""
    from pi_host.config.oauth_http import jwt_claims

    claims = jwt_claims(api_key or "") or {}
    account = (claims.get("https://api.openai.com/auth") or {}).get("chatgpt_account_id")
    if not isinstance(account, str) or not account:
        raise ValueError("Failed to extract accountId from token: log in with `pi auth login openai-codex`")
    return account


def prepare(model: Any, context: Any, options: Any) -> tuple[str, dict[str, Any], dict[str, str]]:
    """(url, body, headers) of the SSE request; pure, for tests. Raises ``ValueError`` when the
    key is not a ChatGPT access token (no account id in it)."""
    account = account_id(options.api_key)
    flags = dict(model.compat or {})
    messages = transform(model, context.messages)
    cap = output_cap(model, messages, options)
    body = build_body(model, messages, context.tools, options, flags, cap, off_as_update=True)
    body.pop("prompt_cache_retention", None)  # the Codex backend keeps its own cache
    session = cache_session_id(options)
    if session:
        body["prompt_cache_key"] = session
    body["text"] = {"verbosity": "low"}
    body["include"] = ["reasoning.encrypted_content"]
    body["tool_choice"] = "auto"
    body["parallel_tool_calls"] = True
    declared = [i.get("tools") or () for i in body["input"] if i.get("type") == "additional_tools"]
    for tool in [*(body.get("tools") or ()), *(t for tools in declared for t in tools)]:
        tool.pop("strict", None)
    headers = {"originator": "pi", **auth_headers(model, options)}
    headers.update({
        "authorization": f"Bearer {options.api_key}",
        "chatgpt-account-id": account,
        "openai-beta": "responses=experimental",
        "accept": "text/event-stream",
        "content-type": "application/json",
    })  # fmt: skip
    if session:
        headers["session-id"] = headers["x-client-request-id"] = session
    return codex_url(model.base_url), scrub_body(body), headers


def stream_codex(model: Any, context: Any, options: Any) -> AsyncIterator[Any]:
    builder = MessageBuilder(model, api=API, options=options)
    return guard(builder, _events(builder, model, context, options), options.signal)


async def _events(builder: MessageBuilder, model: Any, context: Any, options: Any) -> AsyncIterator[Any]:
    from pi_provider_openai.codex_stream import run

    url, body, headers = prepare(model, context, options)  # a ValueError becomes the error event
    record_effort(builder, body)
    # Closed with us: the socket goes back to the session as soon as the answer is done.
    async with aclosing(run(builder, model, url, body, headers, options)) as events:
        async for event in events:
            yield event
