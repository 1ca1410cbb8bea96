"""The ConverseStream request body (``bedrock-converse-stream``), as pi 1.6.0 sends it through
the AWS SDK: ``messages`` (user text and images, assistant text / tool uses / reasoning, the
tool results of a turn in one user message), ``system``, ``inferenceConfig``, ``toolConfig``
(strict tools: :mod:`pi_provider_bedrock.tools`) and ``additionalModelRequestFields`` (Claude's
thinking, GPT reasoning effort). Claude models that cache get a ``cachePoint`` after the system
prompt and on the last user message.
"""

from __future__ import annotations

import re
from typing import Any

from pi_host.lib.llm.provider_env import env_value
from pi_host.lib.llm.tokens import clamp_thinking_level
from pi_host.lib.llm.transform import scrub_body, transform_messages
from pi_host.protocol.transcript import replay_system
from pi_provider_bedrock.tools import convert_tools, supports_strict

EMPTY = "<empty>"
_FORMATS = {
    "image/jpeg": "jpeg",
    "image/jpg": "jpeg",
    "image/png": "png",
    "image/gif": "gif",
    "image/webp": "webp",
}
_ADAPTIVE = ("opus-4-6", "opus-4-7", "opus-4-8", "opus-5", "sonnet-4-6", "sonnet-5", "haiku-5", "fable-5")
_XHIGH = ("opus-4-7", "opus-4-8", "opus-5", "sonnet-5", "haiku-5", "fable-5")
_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 16384, "max": 16384}
_GPT_EFFORT = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
    "max": "max",
}
_GPT_OSS_EFFORT = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
    "max": "high",
}
BINDING_BETA = "thinking-binding-controls-2026-08-01"


def _candidates(model: Any) -> list[str]:
    values = [model.id, model.name] if model.name else [model.id]
    return [form for v in values for form in (v.lower(), re.sub(r"[\s_.:]+", "-", v.lower()))]


def _any(model: Any, parts: tuple[str, ...]) -> bool:
    return any(p in c for c in _candidates(model) for p in parts)


def is_claude(model: Any) -> bool:
    ident, name = model.id.lower(), (model.name or "").lower()
    return "anthropic.claude" in ident or "anthropic/claude" in ident or "claude" in name


def caches(model: Any, options: Any) -> bool:
    if not _any(model, ("claude",)):
        return env_value(options, "AWS_BEDROCK_FORCE_CACHE") == "1"
    return _any(
        model, ("fable-5", "opus-5", "sonnet-5", "haiku-5", "-4-", "claude-3-7-sonnet", "claude-3-5-haiku")
    )


def retention(options: Any) -> str:
    if options.cache_retention and options.cache_retention != "short":
        return options.cache_retention
    return "long" if env_value(options, "PI_CACHE_RETENTION") == "long" else "short"


def _cache_point(kind: str) -> dict[str, Any]:
    return {"cachePoint": {"type": "default", **({"ttl": "1h"} if kind == "long" else {})}}


def _text(text: str) -> dict[str, Any] | None:
    return {"text": text} if text.strip() else None


def _image(block: Any) -> dict[str, Any]:
    fmt = _FORMATS.get(block.mime_type)
    if fmt is None:
        raise ValueError(f"Unknown image type: {block.mime_type}")
    return {"image": {"format": fmt, "source": {"bytes": block.data}}}  # base64 in the JSON protocol


def _user(message: Any) -> dict[str, Any]:
    if isinstance(message.content, str):
        return {"role": "user", "content": [_text(message.content) or {"text": EMPTY}]}
    content = []
    for block in message.content:
        if block.type == "text":
            if item := _text(block.text):
                content.append(item)
        elif block.type == "image":
            content.append(_image(block))
    return {"role": "user", "content": content or [{"text": EMPTY}]}


def _assistant(message: Any, model: Any) -> dict[str, Any] | None:
    content: list[dict[str, Any]] = []
    for block in message.content:
        if block.type == "text":
            if item := _text(block.text):
                content.append(item)
        elif block.type == "toolCall":
            content.append(
                {"toolUse": {"toolUseId": block.id, "name": block.name, "input": block.arguments or {}}}
            )
        elif block.type == "thinking":
            if getattr(block, "redacted", False):
                if block.thinking_signature:
                    content.append({"reasoningContent": {"redactedContent": block.thinking_signature}})
                continue
            if not block.thinking.strip():
                continue
            signature = block.thinking_signature
            if not is_claude(model):
                content.append({"reasoningContent": {"reasoningText": {"text": block.thinking}}})
            elif signature and signature.strip():
                reasoning = {"text": block.thinking, "signature": signature}
                content.append({"reasoningContent": {"reasoningText": reasoning}})
            else:
                content.append({"text": block.thinking})  # unsigned thinking cannot be replayed as such
    return {"role": "assistant", "content": content} if content else None


def _tool_result(message: Any) -> dict[str, Any]:
    content = []
    for block in message.content:
        if block.type == "image":
            content.append(_image(block))
        elif item := _text(block.text):
            content.append(item)
    status = "error" if message.is_error else "success"
    return {
        "toolResult": {
            "toolUseId": message.tool_call_id,
            "content": content or [{"text": EMPTY}],
            "status": status,
        }
    }


def convert_messages(model: Any, messages: list[Any], options: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        role = getattr(message, "role", None)
        if role == "user":
            out.append(_user(message))
        elif role == "assistant":
            if item := _assistant(message, model):
                out.append(item)
        elif role == "toolResult":
            result = _tool_result(message)
            last = out[-1] if out else None
            if (
                last is not None
                and last["role"] == "user"
                and all("toolResult" in c for c in last["content"])
            ):
                last["content"].append(result)  # one user message holds a turn's results
            else:
                out.append({"role": "user", "content": [result]})
    kind = retention(options)
    if kind != "none" and caches(model, options) and out and out[-1]["role"] == "user":
        out[-1]["content"].append(_cache_point(kind))
    return out


def _reasoning_fields(
    model: Any, options: Any, level: str, region: str | None, max_tokens: int | None
) -> dict[str, Any] | None:
    if not model.reasoning or level == "off":
        return None
    if is_claude(model):
        gov = (region or "").lower().startswith("us-gov-") or model.id.lower().startswith(
            ("us-gov.", "arn:aws-us-gov:")
        )
        display = None if gov else "summarized"
        binding = not gov and _any(model, _XHIGH)
        if _any(model, _ADAPTIVE):
            thinking: dict[str, Any] = {"type": "adaptive"}
            if display:
                thinking["display"] = display
            if binding:
                thinking["block_binding"] = {"prefix_mismatch_behavior": "drop_block"}
            mapped = (model.thinking_level_map or {}).get(level)
            effort = (
                "xhigh"
                if level == "xhigh" and _any(model, _XHIGH)
                else mapped
                if isinstance(mapped, str)
                else None
            )
            effort = effort or {"minimal": "low", "low": "low", "medium": "medium"}.get(level, "high")
            fields: dict[str, Any] = {"thinking": thinking, "output_config": {"effort": effort}}
            if binding:
                fields["anthropic_beta"] = [BINDING_BETA]
            return fields
        budgets = options.thinking_budgets or {}
        budget = budgets.get("high" if level in ("xhigh", "max") else level) or _BUDGETS[level]
        if max_tokens:
            budget = min(budget, max(0, max_tokens - 1024))  # leave room for the answer
        thinking = {"type": "enabled", "budget_tokens": budget, **({"display": display} if display else {})}
        return {"thinking": thinking, "anthropic_beta": ["interleaved-thinking-2025-05-14"]}
    if _any(model, ("gpt-oss",)):
        return {"reasoning_effort": _GPT_OSS_EFFORT[level]}
    if _any(model, ("gpt-",)):
        mapped = (model.thinking_level_map or {}).get(level)
        return {"reasoning": {"effort": mapped if isinstance(mapped, str) else _GPT_EFFORT[level]}}
    return None


def build_body(
    model: Any, context: Any, options: Any, region: str | None = None, tools: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The request body; ``tools`` is a ``toolConfig`` already made (:func:`convert_tools`), else
    the context's tools are converted here."""
    messages = transform_messages(context.messages, model)  # Bedrock's tool-id rule for the api
    prompt = replay_system(messages).render()
    body: dict[str, Any] = {"messages": convert_messages(model, messages, options)}
    kind = retention(options)
    if prompt:
        body["system"] = [{"text": prompt}]
        if kind != "none" and caches(model, options):
            body["system"].append(_cache_point(kind))
    inference: dict[str, Any] = {}
    level = clamp_thinking_level(model, options.thinking_level)
    max_tokens = options.max_tokens or (model.max_tokens if is_claude(model) else None)
    if max_tokens:
        inference["maxTokens"] = max_tokens
    if options.temperature is not None:
        inference["temperature"] = options.temperature
    body["inferenceConfig"] = inference
    tool_config = convert_tools(context.tools, supports_strict(model), False)[0] if tools is None else tools
    if tool_config is not None:
        body["toolConfig"] = tool_config
    extra = _reasoning_fields(model, options, level, region, max_tokens)
    if extra:
        body["additionalModelRequestFields"] = extra
    return scrub_body(body)
