"""What each provider API looks like on the wire, for the fault-injection suite: a two-chunk text
answer, the API's error body, and the faults built from them (a 401 echoing the key, 429 with
``Retry-After``, 5xx, a drop mid-stream, a malformed chunk, a stall, silence, redirects).

Every built-in provider here is the real catalog entry with its ``baseUrl`` pointed at the
loopback server (models.json), so its key comes from the provider's own environment variable,
``auth.json`` or ``--api-key`` exactly as for a user.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from tests.support.providers.sse import DROP, STALL, Reply, sse_events


@dataclass(frozen=True)
class Api:
    name: str
    provider: str
    model: str
    env: str
    prefix: str
    """Path of the provider's baseUrl on the server."""


APIS = {
    "anthropic-messages": Api("anthropic-messages", "anthropic", "claude-haiku-4-5", "ANTHROPIC_API_KEY", ""),
    "openai-completions": Api("openai-completions", "groq", "openai/gpt-oss-20b", "GROQ_API_KEY", "/v1"),
    "openai-responses": Api("openai-responses", "openai", "gpt-5-mini", "OPENAI_API_KEY", "/v1"),
    "google-generative-ai": Api(
        "google-generative-ai", "google", "gemini-2.5-flash", "GEMINI_API_KEY", "/v1beta"
    ),
}


def _completions(text: str, finish: str | None) -> dict:
    return {
        "id": "chatcmpl-f",
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": text} if text else {}, "finish_reason": finish}],
    }


def answer_chunks(api: str, text: str) -> list[bytes]:
    """A text answer in two chunks (the first alone is a stream cut short)."""
    half, rest = text[: len(text) // 2], text[len(text) // 2 :]
    if api == "anthropic-messages":
        first = sse_events(
            [
                (
                    "message_start",
                    {"type": "message_start", "message": {"id": "msg_f", "usage": {"input_tokens": 5}}},
                ),
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "text", "text": ""},
                    },
                ),
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": half},
                    },
                ),
            ]
        )
        second = sse_events(
            [
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": rest},
                    },
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                (
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": "end_turn"},
                        "usage": {"output_tokens": 3},
                    },
                ),
                ("message_stop", {"type": "message_stop"}),
            ]
        )
    elif api == "openai-completions":
        first = sse_events([(None, _completions(half, None))])
        second = sse_events(
            [(None, _completions(rest, None)), (None, _completions("", "stop")), (None, "[DONE]")]
        )
    elif api == "openai-responses":
        item = {"type": "message", "id": "msg_f", "role": "assistant"}
        first = sse_events(
            [
                (None, {"type": "response.created", "response": {"id": "resp_f", "model": "m"}}),
                (
                    None,
                    {
                        "type": "response.output_item.added",
                        "output_index": 0,
                        "item": {**item, "content": []},
                    },
                ),
                (
                    None,
                    {
                        "type": "response.output_text.delta",
                        "item_id": "msg_f",
                        "output_index": 0,
                        "delta": half,
                    },
                ),
            ]
        )
        done = {**item, "content": [{"type": "output_text", "text": text}]}
        second = sse_events(
            [
                (
                    None,
                    {
                        "type": "response.output_text.delta",
                        "item_id": "msg_f",
                        "output_index": 0,
                        "delta": rest,
                    },
                ),
                (None, {"type": "response.output_item.done", "output_index": 0, "item": done}),
                (
                    None,
                    {
                        "type": "response.completed",
                        "response": {
                            "id": "resp_f",
                            "status": "completed",
                            "usage": {"input_tokens": 5, "output_tokens": 3},
                        },
                    },
                ),
            ]
        )
    else:
        chunk = lambda piece, finish=None: {  # noqa: E731
            "candidates": [
                {
                    "content": {"parts": [{"text": piece}], "role": "model"},
                    **({"finishReason": finish} if finish else {}),
                }
            ],
            "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 3},
        }
        first = sse_events([(None, chunk(half))])
        second = sse_events([(None, chunk(rest, "STOP"))])
    return [first.encode(), second.encode()]


def answer(api: str, text: str) -> Reply:
    return Reply(parts=answer_chunks(api, text))


def error_body(api: str, status: int, message: str) -> dict:
    if api == "anthropic-messages":
        kind = {401: "authentication_error", 429: "rate_limit_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    if api == "google-generative-ai":
        kind = {401: "UNAUTHENTICATED", 429: "RESOURCE_EXHAUSTED"}.get(status, "INTERNAL")
        return {"error": {"code": status, "message": message, "status": kind}}
    kind = {401: "invalid_request_error", 429: "rate_limit_error"}.get(status, "server_error")
    return {"error": {"message": message, "type": kind, "code": None}}


SHAPED = "sk-ant-api03-Zq8vN2mK5xR7tY1wP4sL9dF3gH6jB0cV"
"""A token nobody configured: the 401 also echoes it, and it must go too (redacted by its shape)."""


def unauthorized(api: str, key: str) -> Reply:
    """A 401 whose body repeats the key it got, and an earlier Anthropic-shaped one."""
    text = f"Invalid API key provided: {key} (the previous request used {SHAPED})"
    return Reply.json(401, json.dumps(error_body(api, 401, text)))


def status(api: str, code: int, headers: dict[str, str] | None = None) -> Reply:
    return Reply.json(code, error_body(api, code, "Please retry your request later"), headers=headers)


def dropped(api: str) -> Reply:
    return Reply(parts=[answer_chunks(api, "cut short here")[0], DROP])


def malformed(api: str) -> Reply:
    return Reply(parts=[answer_chunks(api, "before the break")[0], b"data: {this is not json\n\n", STALL])


def stalled(api: str) -> Reply:
    return Reply(parts=[answer_chunks(api, "then silence")[0], STALL])


def silent() -> Reply:
    return Reply(before=STALL)
