"""Building an ``openai-completions`` request body (reference §3.4).

Input is the transcript *after* the cross-model transform (foreign thinking dropped, ids
normalised, orphaned calls answered). Output is the JSON body for ``POST /chat/completions``.
"""

from __future__ import annotations

import json
from typing import Any

from pi_host.lib.llm.tokens import apply_budget
from pi_host.protocol.transcript import patch_text, split_system
from pi_provider_openai import thinking
from pi_provider_openai.shared import add_sampling_params

REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
IMAGE_ONLY_RESULT = "(see attached image)"
TOOL_IMAGES_CAPTION = "Attached image(s) from tool result:"
BRIDGE_TEXT = "I have processed the tool results."


def _args_json(arguments: Any) -> str:
    return json.dumps(arguments if arguments is not None else {}, ensure_ascii=False, separators=(",", ":"))


def _image_part(block: Any) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{block.mime_type};base64,{block.data}"}}


def _user_content(message: Any, vision: bool) -> str | list[dict[str, Any]] | None:
    content = message.content
    if isinstance(content, str):
        return content if content.strip() else None
    parts: list[dict[str, Any]] = []
    for block in content:
        if block.type == "text":
            if block.text:
                parts.append({"type": "text", "text": block.text})
        elif block.type == "image" and vision:
            parts.append(_image_part(block))
    return parts or None


def _assistant_message(message: Any, compat: dict[str, Any]) -> dict[str, Any] | None:
    texts: list[str] = []
    thoughts: list[str] = []
    field: str | None = None
    calls: list[dict[str, Any]] = []
    for block in message.content:
        kind = block.type
        if kind == "text":
            if block.text:
                texts.append(block.text)
        elif kind == "thinking":
            if block.thinking and block.thinking.strip():
                thoughts.append(block.thinking)
                if field is None and block.thinking_signature in REASONING_FIELDS:
                    field = block.thinking_signature
        elif kind == "toolCall":
            calls.append(
                {
                    "id": block.id,
                    "type": "function",
                    "function": {"name": block.name, "arguments": _args_json(block.arguments)},
                }
            )
    out: dict[str, Any] = {"role": "assistant"}
    if thoughts and compat.get("requiresThinkingAsText"):
        texts.insert(0, "\n\n".join(thoughts))
        thoughts = []
    text = "".join(texts)
    if text:
        out["content"] = text
    elif compat.get("requiresNonNullAssistantContent") or compat.get("requiresAssistantAfterToolResult"):
        out["content"] = ""
    else:
        out["content"] = None
    if thoughts:
        out[field or "reasoning_content"] = "\n".join(thoughts)
    elif compat.get("requiresReasoningContentOnAssistantMessages"):
        out["reasoning_content"] = ""
    if calls:
        out["tool_calls"] = calls
    if not text and not calls:
        return None
    return out


def _tool_result_text(message: Any) -> tuple[str, list[Any]]:
    texts = [b.text for b in message.content if b.type == "text"]
    images = [b for b in message.content if b.type == "image"]
    text = "\n".join(texts)
    if not text and images:
        text = IMAGE_ONLY_RESULT
    return text, images


def convert_messages(model: Any, messages: list[Any], compat: dict[str, Any]) -> list[dict[str, Any]]:
    """Transcript → chat-completions ``messages``."""
    vision = model.supports_images()
    in_place = bool(compat.get("supportsMidConvoSystemMessages"))
    prompt, rest = split_system(messages, in_place)
    system_role = "developer" if model.reasoning and compat.get("supportsDeveloperRole") else "system"
    out: list[dict[str, Any]] = []
    if prompt:
        out.append({"role": system_role, "content": prompt})
    pending_images: list[Any] = []
    after_tool = False

    def flush_images() -> None:
        if pending_images:
            parts = [{"type": "text", "text": TOOL_IMAGES_CAPTION}] + [_image_part(b) for b in pending_images]
            out.append({"role": "user", "content": parts})
            pending_images.clear()

    for message in rest:
        role = getattr(message, "role", None)
        if role != "toolResult":
            flush_images()
        if role == "toolResult":
            text, images = _tool_result_text(message)
            item: dict[str, Any] = {"role": "tool", "content": text, "tool_call_id": message.tool_call_id}
            if compat.get("requiresToolResultName"):
                item["name"] = message.tool_name
            out.append(item)
            if vision:
                pending_images.extend(images)
            after_tool = True
            continue
        if role == "user":
            content = _user_content(message, vision)
            if content is None:
                continue
            if after_tool and compat.get("requiresAssistantAfterToolResult"):
                out.append({"role": "assistant", "content": BRIDGE_TEXT})
            out.append({"role": "user", "content": content})
        elif role == "assistant":
            item = _assistant_message(message, compat)
            if item is None:
                continue
            out.append(item)
        elif role == "system":
            text = patch_text(message)
            if text:
                out.append({"role": system_role, "content": text})
        after_tool = False
    flush_images()
    return out


def _tool(decl: Any, compat: dict[str, Any]) -> dict[str, Any]:
    function: dict[str, Any] = {
        "name": decl.name,
        "description": decl.description,
        "parameters": decl.parameters,
    }
    if compat.get("supportsStrictMode"):
        function["strict"] = False
    return {"type": "function", "function": function}


def _has_tool_history(messages: list[Any]) -> bool:
    for message in messages:
        if getattr(message, "role", None) == "toolResult":
            return True
        if getattr(message, "role", None) == "assistant" and any(
            b.type == "toolCall" for b in message.content
        ):
            return True
    return False


def _template_values(template: Any, enabled: bool, effort: Any, budget: int) -> dict[str, Any] | None:
    """pi's configurable chat-template values (``chatTemplateKwargs`` / ``chatTemplateArgs``):
    plain values are sent as written; ``{"$var": "thinking.enabled" | "thinking.effort" |
    "thinking.budget"}`` takes pi's value, and ``"omitWhenOff": true`` drops the entry when
    thinking is off. An entry with no value (no budget, no effort) is left out, and so is an
    empty result."""
    if not isinstance(template, dict):
        return None
    out: dict[str, Any] = {}
    for key, value in template.items():
        if isinstance(value, dict):
            if not enabled and value.get("omitWhenOff"):
                continue
            var = value.get("$var")
            if var == "thinking.enabled":
                value = enabled
            elif var == "thinking.budget":
                value = budget if enabled and budget > 0 else None
            else:
                value = effort if isinstance(effort, str) else None
            if value is None:
                continue
        out[key] = value
    return out or None


def _budget(body: dict[str, Any], model: Any, level: str, compat: dict[str, Any], options: Any) -> int:
    """Token budget for budget-style servers (reference §3.2); widens the output cap to make
    room for it, always leaving 1024 tokens for the answer."""
    field = compat.get("maxTokensField") or "max_completion_tokens"
    cap = body.get(field)
    budget = thinking.budget_for(level, options.thinking_budgets)
    if not isinstance(cap, int):
        return budget
    max_tokens, budget = apply_budget(cap, budget, model.max_tokens)
    body[field] = max_tokens
    return budget


def _apply_thinking(
    body: dict[str, Any], model: Any, level: str, compat: dict[str, Any], options: Any
) -> None:
    if not model.reasoning:
        return
    enabled = level != "off"
    effort = thinking.mapped_value(model, level)
    fmt = compat.get("thinkingFormat") or "openai"
    budget_field = compat.get("thinkingTokenBudgetField")
    budget = (
        _budget(body, model, level, compat, options)
        if enabled and (budget_field or fmt in ("chat-template", "baseten"))
        else 0
    )
    if fmt == "openai":
        if compat.get("supportsReasoningEffort") and effort is not None:
            body["reasoning_effort"] = effort
    elif fmt == "openrouter":
        if effort is not None:
            body["reasoning"] = {"effort": effort}
    elif fmt == "deepseek":
        body["thinking"] = {"type": "enabled" if enabled else "disabled"}
        if enabled and compat.get("supportsReasoningEffort") and effort is not None:
            body["reasoning_effort"] = effort
    elif fmt == "together":
        body["reasoning"] = {"enabled": enabled}
    elif fmt == "zai":
        body["thinking"] = {"type": "enabled" if enabled else "disabled", "clear_thinking": False}
    elif fmt == "qwen":
        body["enable_thinking"] = enabled
    elif fmt == "ant-ling":
        if enabled and isinstance(effort, str):
            body["reasoning"] = {"effort": effort}
    # These servers take an effort next to their own thinking switch when the model's compat
    # says so (GLM 5.x, Qwen 3.8, Kimi on Together), as pi 1.6.0 sends it.
    if fmt in ("zai", "qwen", "together") and enabled and compat.get("supportsReasoningEffort"):
        if isinstance(effort, str):
            body["reasoning_effort"] = effort
    elif fmt == "qwen-chat-template":
        body["chat_template_kwargs"] = {"enable_thinking": enabled, "preserve_thinking": True}
    elif fmt in ("chat-template", "baseten"):
        field = "chat_template_kwargs" if fmt == "chat-template" else "chat_template_args"
        template = compat.get("chatTemplateKwargs" if fmt == "chat-template" else "chatTemplateArgs")
        values = _template_values(template, enabled, effort, budget)
        if values:
            body[field] = values
        if fmt == "baseten" and compat.get("supportsReasoningEffort") and isinstance(effort, str):
            body["reasoning_effort"] = effort
    elif fmt == "string-thinking":
        if effort is not None:
            body["thinking"] = effort
    if budget_field and enabled:
        body[budget_field] = budget


def build_body(
    model: Any, messages: list[Any], tools: list[Any], options: Any, compat: dict[str, Any], max_tokens: int
) -> dict[str, Any]:
    """The full request body; ``messages`` is the transformed transcript."""
    level = thinking.clamp_level(model, options.thinking_level)
    body: dict[str, Any] = {"model": model.id, "stream": True}
    if compat.get("supportsUsageInStreaming", True):
        body["stream_options"] = {"include_usage": True}
    if compat.get("supportsStore", True):
        body["store"] = False
    body[compat.get("maxTokensField") or "max_completion_tokens"] = max_tokens
    if options.temperature is not None:
        body["temperature"] = options.temperature
    _apply_thinking(body, model, level, compat, options)
    body["messages"] = convert_messages(model, messages, compat)
    if compat.get("cacheControlFormat") == "anthropic" and options.cache_retention != "none":
        _add_cache_control(body["messages"])
    if tools:
        body["tools"] = [_tool(decl, compat) for decl in tools]
        if compat.get("zaiToolStream"):
            body["tool_stream"] = True  # Z.ai streams tool-call arguments only when asked
    elif compat.get("requiresToolsWithToolHistory") and _has_tool_history(messages):
        body["tools"] = []
    retention = options.cache_retention
    base_url = (model.base_url or "").lower()
    key_mode = compat.get("promptCacheKeyMode") or "auto"
    if options.session_id and retention != "none" and key_mode != "disabled":
        if "api.openai.com" in base_url or retention == "long" or key_mode == "enabled":
            body["prompt_cache_key"] = options.session_id
    if retention == "long" and "prompt_cache_key" in body:
        body["prompt_cache_retention"] = "24h"
    if compat.get("vllmPriority") is not None:
        body["priority"] = compat["vllmPriority"]
    return add_sampling_params(body, model, level)


def _add_cache_control(messages: list[dict[str, Any]]) -> None:
    """Anthropic-style breakpoints for OpenRouter ``anthropic/*`` models: the system prompt and the
    last text part of the final user/tool message."""
    marker = {"type": "ephemeral"}
    for item in messages:
        if item["role"] in ("system", "developer") and isinstance(item.get("content"), str):
            item["content"] = [{"type": "text", "text": item["content"], "cache_control": marker}]
            break
    for item in reversed(messages):
        if item["role"] not in ("user", "tool"):
            continue
        content = item.get("content")
        if isinstance(content, str):
            item["content"] = [{"type": "text", "text": content, "cache_control": marker}]
        elif isinstance(content, list):
            for part in reversed(content):
                if part.get("type") == "text":
                    part["cache_control"] = marker
                    break
        break
