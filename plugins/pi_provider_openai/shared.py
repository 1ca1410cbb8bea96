"""Small pieces both OpenAI APIs use: the key header, the output cap, the cross-model transform
call, Mistral tool-call ids, JSON decoding of stream data. Headers and surrogate scrubbing come
from the shared provider layer (``pi_host.lib.llm``)."""

from __future__ import annotations

import re
from typing import Any

import orjson

from pi_host.lib.llm.http import request_headers, user_agent
from pi_host.lib.llm.transform import scrub_body, short_hash

loads = orjson.loads

__all__ = [
    "add_sampling_params",
    "auth_headers",
    "endpoint",
    "loads",
    "mistral_tool_id",
    "output_cap",
    "scrub_body",
    "transform",
]


def mistral_tool_id(call_id: str, model: Any = None, source: Any = None) -> str:
    """Mistral accepts exactly 9 alphanumerics (reference §3.7): the stripped id when it already
    has 9, else a hash of it."""
    stripped = re.sub(r"[^a-zA-Z0-9]", "", call_id)
    return stripped if len(stripped) == 9 else short_hash(call_id, 9)


def output_cap(model: Any, messages: list[Any], options: Any) -> int:
    """The output-token cap (reference §3.2): the requested or model cap fitted to the window."""
    from pi_host.lib.llm.tokens import clamp_max_tokens

    return int(clamp_max_tokens(model, messages, options.max_tokens or None))


def transform(model: Any, messages: list[Any], normalize_id: Any = "auto") -> list[Any]:
    """The cross-model transform (reference §3.7) from the shared provider layer; ``"auto"``
    picks the id rule for ``model.api``."""
    from pi_host.lib.llm.transform import transform_messages

    return transform_messages(messages, model, normalize_id)


def auth_headers(model: Any, options: Any) -> dict[str, str]:
    """``user-agent`` and ``authorization: Bearer <key>``, then the model's and the caller's
    headers (later win)."""
    base = {"user-agent": user_agent()}
    if options.api_key:
        base["authorization"] = f"Bearer {options.api_key}"
    return request_headers(model, options, base)


def add_sampling_params(body: dict[str, Any], model: Any, level: str) -> dict[str, Any]:
    """The model's ``samplingParams``, then its ``samplingParamsByThinkingLevel[level]``, merged
    into the body last (they win over computed fields)."""
    if model.sampling_params:
        body.update(model.sampling_params)
    by_level = (model.sampling_params_by_thinking_level or {}).get(level)
    if isinstance(by_level, dict):
        body.update(by_level)
    return body


def endpoint(base_url: str, path: str) -> str:
    return base_url.rstrip("/") + path
