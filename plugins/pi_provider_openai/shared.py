"""Small pieces both OpenAI APIs use: headers, the output cap, the cross-model transform call,
tool-call id normalisation, JSON decoding of stream data."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import orjson

loads = orjson.loads

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


def short_hash(text: str, length: int = 8) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def mistral_tool_id(call_id: str, model: Any = None, source: Any = None) -> str:
    """Mistral accepts exactly 9 alphanumerics (reference §3.7): the stripped id when it already
    has 9, else a hash of it."""
    stripped = re.sub(r"[^a-zA-Z0-9]", "", call_id)
    return stripped if len(stripped) == 9 else short_hash(call_id, 9)


def output_cap(model: Any, messages: list[Any], options: Any) -> int:
    """The output-token cap (reference §3.2): the requested or model cap fitted to the window."""
    from pi_host.llm.tokens import clamp_max_tokens

    return int(clamp_max_tokens(model, messages, options.max_tokens or None))


def transform(model: Any, messages: list[Any], normalize_id: Any = "auto") -> list[Any]:
    """The cross-model transform (reference §3.7) from the shared provider layer; ``"auto"``
    picks the id rule for ``model.api``."""
    from pi_host.llm.transform import transform_messages

    return transform_messages(messages, model, normalize_id)


def auth_headers(model: Any, options: Any, scheme: str = "bearer") -> dict[str, str]:
    """Key header plus the model's and the caller's extra headers (later ones win)."""
    headers: dict[str, str] = {}
    key = options.api_key
    if key:
        if scheme == "bearer":
            headers["authorization"] = f"Bearer {key}"
        else:
            headers[scheme] = key
    for source in (model.headers, options.headers):
        for name, value in (source or {}).items():
            if value is None:
                headers.pop(name.lower(), None)
            else:
                headers[name.lower()] = value
    return headers


def scrub_body(body: Any) -> Any:
    """The body with unpaired UTF-16 surrogates removed from every string (reference §2.4).

    One orjson encode finds out whether there is anything to do (it rejects lone surrogates), so
    the usual clean body costs a single fast pass.
    """
    try:
        orjson.dumps(body)
        return body
    except TypeError:  # orjson.JSONEncodeError: a lone surrogate (or a non-JSON value)
        pass
    from pi_host.llm.transform import scrub_surrogates

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return scrub_surrogates(value)
        if isinstance(value, dict):
            return {key: walk(item) for key, item in value.items()}
        if isinstance(value, list):
            return [walk(item) for item in value]
        return value

    return walk(body)


def endpoint(base_url: str, path: str) -> str:
    return base_url.rstrip("/") + path
