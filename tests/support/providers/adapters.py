"""The four provider APIs as in-process stream functions pointed at a loopback server, for tests
that check the shared HTTP layer the same way for every adapter."""

from __future__ import annotations

from typing import Any

from pi_provider_anthropic.stream import stream as stream_anthropic
from pi_provider_google.stream import stream_google
from pi_provider_openai.completions import stream_completions
from pi_provider_openai.responses import stream_responses

from pi_host.protocol import StreamOptions
from tests.support.providers.anthropic import model_for
from tests.support.providers.openai_google import context, make_model

API_NAMES = ["anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai"]


def model(api: str, url: str) -> Any:
    if api == "anthropic-messages":
        return model_for(url)
    if api == "google-generative-ai":
        return make_model(url + "/v1beta", api=api, provider="google", id="gemini-2.5-flash")
    return make_model(url + "/v1", api=api, id="gpt-5-mini" if api == "openai-responses" else "qwen3-coder")


STREAMS = {
    "anthropic-messages": stream_anthropic,
    "openai-completions": stream_completions,
    "openai-responses": stream_responses,
    "google-generative-ai": stream_google,
}


def stream(api: str, url: str, **options: Any) -> Any:
    """The API's event stream for a one-prompt context (``options`` are StreamOptions fields)."""
    options.setdefault("api_key", "sk-test-key")
    return STREAMS[api](model(api, url), context(), StreamOptions(**options))


async def collect(api: str, url: str, **options: Any) -> list[Any]:
    return [event async for event in stream(api, url, **options)]


def final(events: list[Any]) -> Any:
    last = events[-1]
    return last.message if last.type == "done" else last.error
