"""The ``azure-openai-responses`` stream function: OpenAI's Responses API as Azure OpenAI serves
it. POST ``<baseUrl>/responses?api-version=<AZURE_OPENAI_API_VERSION or v1>``; the body names
the deployment (``StreamOptions.extra["deployment"]``, which the ``azure`` provider's set-up
fills from ``AZURE_OPENAI_DEPLOYMENT_NAME_MAP``; else the model id); the key goes in
``api-key``. A Microsoft Entra ID access token (a JWT, e.g. from
``!az account get-access-token --resource https://cognitiveservices.azure.com --query accessToken -o tsv``
in auth.json) is sent as ``Authorization: Bearer`` instead, which Azure accepts in place of a key.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any
from urllib.parse import quote

from pi_host.lib.llm.builder import MessageBuilder, guard
from pi_host.lib.llm.http import request_headers, user_agent
from pi_host.lib.llm.provider_env import env_value
from pi_provider_openai.responses import prepare as responses_prepare
from pi_provider_openai.responses import send

API = "azure-openai-responses"
DEFAULT_API_VERSION = "v1"
MIN_OUTPUT_TOKENS = 16  # the Responses API refuses a smaller max_output_tokens


def _is_entra_token(key: str) -> bool:
    return key.startswith("eyJ") and key.count(".") == 2


def prepare(model: Any, context: Any, options: Any) -> tuple[str, dict[str, Any], dict[str, str]]:
    """(url, body, headers) for a request; pure, for tests."""
    # Azure's strict mode is on unless the model says otherwise; it takes no configuration updates.
    strict = {"supports_strict": bool((model.compat or {}).get("supportsStrictMode", True))}
    _, body, _ = responses_prepare(model, context, options, tool_options=strict, effort_updates=False)
    body["model"] = options.extra.get("deployment") or model.id
    if "max_output_tokens" in body:
        body["max_output_tokens"] = max(body["max_output_tokens"], MIN_OUTPUT_TOKENS)
    version = env_value(options, "AZURE_OPENAI_API_VERSION") or DEFAULT_API_VERSION
    url = f"{model.base_url.rstrip('/')}/responses?api-version={quote(version, safe='')}"
    base = {"user-agent": user_agent()}
    key = options.api_key
    if key:
        if _is_entra_token(key):
            base["authorization"] = f"Bearer {key}"
        else:
            base["api-key"] = key
    return url, body, request_headers(model, options, base)


def stream_azure_responses(model: Any, context: Any, options: Any) -> AsyncIterator[Any]:
    builder = MessageBuilder(model, api=API, options=options)
    return guard(builder, _events(builder, model, context, options), options.signal)


async def _events(builder: MessageBuilder, model: Any, context: Any, options: Any) -> AsyncIterator[Any]:
    problem = None
    if not options.api_key:
        problem = f"No API key for provider: {model.provider}"
    elif not model.base_url:
        problem = "Azure OpenAI base URL is required: set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME"
    if problem is not None:
        yield builder.fail(problem)
        return
    url, body, headers = prepare(model, context, options)
    async with aclosing(send(builder, url, body, headers, options)) as events:  # closed with us
        async for event in events:
            yield event
