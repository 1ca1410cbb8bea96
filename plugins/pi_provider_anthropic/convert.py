"""Building the Messages API request body and headers (reference §3.3)."""

from __future__ import annotations

import os
from typing import Any

from pi_host.lib.llm.http import user_agent
from pi_host.lib.llm.tokens import apply_budget, clamp_max_tokens, clamp_thinking_level, thinking_budget
from pi_host.lib.llm.transform import scrub_surrogates, transform_messages
from pi_host.protocol.transcript import replay_system
from pi_provider_anthropic.tools import convert_tools

API_VERSION = "2023-06-01"
BETA_INTERLEAVED = "interleaved-thinking-2025-05-14"
BETA_FINE_GRAINED = "fine-grained-tool-streaming-2025-05-14"
# supportsMidConvoEffort: effort set by system messages inside the conversation, and thinking
# blocks that stop matching their prefix dropped instead of failing the request.
BETAS_MID_CONVO_EFFORT = ("mid-conversation-output-config-2026-07-01", "thinking-binding-controls-2026-08-01")
EFFORTS = ("low", "medium", "high", "xhigh", "max")
REQUEST_EFFORT_WITH_MARKERS = "low"
"""The top-level effort while effort messages set each reply's: it is part of the cached prefix so
it never changes, and it is the lowest because an organisation may cap effort and refuse any
request that names a level above the cap."""
REDACTED_PLACEHOLDER = "[Reasoning redacted]"
IMAGE_ONLY_RESULT = "(see attached image)"
ERROR_IMAGES_CAPTION = "Images from the failed tool result above:"
CLAUDE_CODE_IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude."
CLAUDE_CODE_TOOL_NAMES = {
    "read": "Read",
    "write": "Write",
    "edit": "Edit",
    "bash": "Bash",
    "grep": "Grep",
    "ls": "LS",
}

_EFFORT = {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}


def compat(model: Any, name: str, default: Any) -> Any:
    value = (model.compat or {}).get(name)
    return default if value is None else value


def is_oauth_key(key: str | None) -> bool:
    return bool(key) and "sk-ant-oat" in key  # type: ignore[operator]


def _auth_header(model: Any) -> bool:
    return bool(getattr(model, "authHeader", None) or (model.model_extra or {}).get("authHeader"))


def uses_bearer(model: Any, key: str | None) -> bool:
    """OAuth tokens, ``ANTHROPIC_AUTH_TOKEN`` (gateways) and models.json ``authHeader``."""
    if is_oauth_key(key):
        return True
    if _auth_header(model):
        return True
    token = os.environ.get("ANTHROPIC_AUTH_TOKEN")
    return bool(token) and key == token


def endpoint(model: Any) -> str:
    base = (model.base_url or "https://api.anthropic.com").rstrip("/")
    return base + ("/messages" if base.endswith("/v1") else "/v1/messages")


def cache_control(model: Any, retention: str) -> dict[str, Any] | None:
    if retention == "none":
        return None
    control: dict[str, Any] = {"type": "ephemeral"}
    long_ok = compat(
        model, "supportsLongCacheRetention", "api.anthropic.com" in (model.base_url or "api.anthropic.com")
    )
    if retention == "long" and long_ok:
        control["ttl"] = "1h"
    return control


def cache_retention(options: Any) -> str:
    retention = getattr(options, "cache_retention", None) or "short"
    if retention == "short" and os.environ.get("PI_CACHE_RETENTION") == "long":
        return "long"
    return retention


# --- content ----------------------------------------------------------------------------------------


def _image(block: Any) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": block.mime_type, "data": block.data}}


def _user_content(content: Any) -> list[dict[str, Any]] | str | None:
    if isinstance(content, str):
        return scrub_surrogates(content) if content.strip() else None
    blocks = []
    for block in content:
        if block.type == "text":
            if block.text.strip():
                blocks.append({"type": "text", "text": scrub_surrogates(block.text)})
        elif block.type == "image":
            blocks.append(_image(block))
    return blocks or None


def _assistant_content(message: Any, model: Any, tool_names: dict[str, str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    allow_empty = compat(model, "allowEmptySignature", False)
    for block in message.content:
        kind = block.type
        if kind == "text":
            if block.text.strip():
                out.append({"type": "text", "text": scrub_surrogates(block.text)})
        elif kind == "thinking":
            if block.redacted:
                out.append({"type": "redacted_thinking", "data": block.thinking_signature or ""})
            elif block.thinking_signature:
                out.append(
                    {
                        "type": "thinking",
                        "thinking": scrub_surrogates(block.thinking),
                        "signature": block.thinking_signature,
                    }
                )
            elif allow_empty:
                out.append(
                    {"type": "thinking", "thinking": scrub_surrogates(block.thinking), "signature": ""}
                )
            elif block.thinking.strip():
                out.append({"type": "text", "text": scrub_surrogates(block.thinking)})
        elif kind == "toolCall":
            out.append(
                {
                    "type": "tool_use",
                    "id": block.id,
                    "name": tool_names.get(block.name, block.name),
                    "input": block.arguments,
                }
            )
    return out


def _tool_results(results: list[Any]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    moved: list[dict[str, Any]] = []
    for result in results:
        texts = [scrub_surrogates(b.text) for b in result.content if b.type == "text"]
        images = [_image(b) for b in result.content if b.type == "image"]
        entry: dict[str, Any] = {"type": "tool_result", "tool_use_id": result.tool_call_id}
        if images and result.is_error:
            moved.extend(images)  # error results carry text only; their images follow with a caption
            images = []
        if not images:
            entry["content"] = "\n".join(texts)
        else:
            parts: list[dict[str, Any]] = [{"type": "text", "text": t} for t in texts if t]
            if not parts:
                parts.append({"type": "text", "text": IMAGE_ONLY_RESULT})
            entry["content"] = parts + images
        entry["is_error"] = bool(result.is_error)
        blocks.append(entry)
    if moved:
        blocks.append({"type": "text", "text": ERROR_IMAGES_CAPTION})
        blocks.extend(moved)
    return blocks


def convert_messages(
    messages: list[Any], model: Any, tool_names: dict[str, str], levels: dict[int, str] | None = None
) -> list[dict[str, Any]]:
    """The ``messages`` list. ``levels``, when given, receives ``{position: effort}`` for each
    converted reply of this provider that recorded the effort it was made with."""
    out: list[dict[str, Any]] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        role = getattr(message, "role", None)
        if role == "user":
            content = _user_content(message.content)
            if content is not None:
                out.append({"role": "user", "content": content})
        elif role == "assistant":
            content = _assistant_content(message, model, tool_names)
            if content:
                level = message.provider_thinking_level
                same = message.api == "anthropic-messages" and message.provider == model.provider
                if levels is not None and same and level in EFFORTS:
                    levels[len(out)] = level
                out.append({"role": "assistant", "content": content})
        elif role == "toolResult":
            run = []
            while i < len(messages) and getattr(messages[i], "role", None) == "toolResult":
                run.append(messages[i])
                i += 1
            out.append({"role": "user", "content": _tool_results(run)})
            continue
        i += 1
    return out


def _place_last_cache_control(messages: list[dict[str, Any]], control: dict[str, Any]) -> None:
    if not messages or messages[-1]["role"] != "user":
        return
    last = messages[-1]
    if isinstance(last["content"], str):
        last["content"] = [{"type": "text", "text": last["content"]}]
    block = last["content"][-1] if last["content"] else None
    if block is not None and block["type"] in ("text", "image", "tool_result"):
        block["cache_control"] = dict(control)


def _with_effort_markers(
    messages: list[dict[str, Any]], levels: dict[int, str], active: str
) -> list[dict[str, Any]]:
    """An effort-only system message before each earlier reply (its own effort) and one at the end
    (this reply's), so changing the level leaves the cached prefix as it was."""
    out: list[dict[str, Any]] = []
    for position, message in enumerate(messages):
        if position in levels:
            out.append({"role": "system", "content": [], "output_config": {"effort": levels[position]}})
        out.append(message)
    out.append({"role": "system", "content": [], "output_config": {"effort": active}})
    return out


# --- the request ----------------------------------------------------------------------------------


def build_request(
    model: Any,
    context: Any,
    options: Any,
    api_key: str | None,
    plain_preferred: bool = False,
    preferred_strict: list[bool] | None = None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """``(body, headers)`` for one streaming Messages request. ``plain_preferred`` sends the
    tools that only prefer strict sampling as plain tools (the limit fallback, tools.py); whether
    any went out strict for that reason is appended to ``preferred_strict``."""
    oauth = is_oauth_key(api_key)
    tool_names = CLAUDE_CODE_TOOL_NAMES if oauth else {}
    messages = transform_messages(list(context.messages), model)
    state = replay_system(messages)
    retention = cache_retention(options)
    control = cache_control(model, retention)

    level = clamp_thinking_level(model, options.thinking_level)
    cap = clamp_max_tokens(model, messages, options.max_tokens)
    body: dict[str, Any] = {"model": model.id, "max_tokens": cap, "stream": True}
    adaptive = bool(compat(model, "forceAdaptiveThinking", False))
    thinking_on = model.reasoning and level != "off"
    mid_convo = bool(compat(model, "supportsMidConvoEffort", False))
    # "off" cannot be set per message, so it sends no markers (unless the model cannot turn off).
    level_map = model.thinking_level_map or {}
    markers = mid_convo and not (model.reasoning and level == "off" and level_map.get("off", "") is not None)
    active = "high"
    if markers:
        if adaptive and thinking_on:
            mapped = level_map.get(level)
            active = mapped if isinstance(mapped, str) else _EFFORT.get(level, "high")
        body["thinking"] = {
            "type": "adaptive",
            "display": "summarized",
            "block_binding": {"prefix_mismatch_behavior": "drop_block"},
        }
        body["output_config"] = {"effort": REQUEST_EFFORT_WITH_MARKERS}
    elif model.reasoning:
        if not thinking_on:
            body["thinking"] = {"type": "disabled"}
        elif adaptive:
            body["thinking"] = {"type": "adaptive", "display": "summarized"}
            mapped = (model.thinking_level_map or {}).get(level)
            body["output_config"] = {"effort": mapped or _EFFORT.get(level, "high")}
        else:
            max_tokens, budget = apply_budget(
                cap, thinking_budget(level, options.thinking_budgets), model.max_tokens
            )
            body["max_tokens"] = max_tokens
            body["thinking"] = {"type": "enabled", "budget_tokens": budget, "display": "summarized"}

    system: list[dict[str, Any]] = []
    if oauth:
        system.append({"type": "text", "text": CLAUDE_CODE_IDENTITY})
    prompt = state.render()
    if prompt:
        system.append({"type": "text", "text": scrub_surrogates(prompt)})
    if system and control:
        system[-1]["cache_control"] = dict(control)
    if system:
        body["system"] = system

    decls = list(context.tools) if context.tools else list(state.tools.values())
    eager = compat(model, "supportsEagerToolInputStreaming", True)
    if decls:
        strict_ok = bool(compat(model, "supportsStrictTools", False))
        tools, preferred = convert_tools(decls, tool_names, eager, strict_ok, plain_preferred)
        if preferred_strict is not None:
            preferred_strict.append(preferred)
        if control and compat(model, "supportsCacheControlOnTools", True):
            tools[-1]["cache_control"] = dict(control)
        body["tools"] = tools

    levels: dict[int, str] = {}
    converted = convert_messages(messages, model, tool_names, levels if markers else None)
    if control:
        _place_last_cache_control(converted, control)
    body["messages"] = _with_effort_markers(converted, levels, active) if markers else converted
    sends_temperature = not thinking_on and not mid_convo and compat(model, "supportsTemperature", True)
    if options.temperature is not None and sends_temperature:
        body["temperature"] = options.temperature

    betas = []
    if not eager:
        betas.append(BETA_FINE_GRAINED)
    if thinking_on and not adaptive:
        betas.append(BETA_INTERLEAVED)
    if mid_convo:
        betas.extend(BETAS_MID_CONVO_EFFORT)
    headers: dict[str, str] = {
        "anthropic-version": API_VERSION,
        "anthropic-dangerous-direct-browser-access": "true",
        "user-agent": user_agent(),
    }
    if oauth:
        betas = ["claude-code-20250219", "oauth-2025-04-20", *betas]
        headers["x-app"] = "cli"
    if betas:
        headers["anthropic-beta"] = ",".join(betas)
    if api_key:
        if _auth_header(model) and not is_oauth_key(api_key):
            # models.json authHeader adds the bearer header; the key header stays (as pi's SDK client)
            headers["x-api-key"] = api_key
            headers["authorization"] = f"Bearer {api_key}"
        elif uses_bearer(model, api_key):
            headers["authorization"] = f"Bearer {api_key}"
        else:
            headers["x-api-key"] = api_key
    return body, headers


def restore_tool_name(name: str, context: Any, oauth: bool) -> str:
    """Map a Claude Code-cased tool name back to the declared one (OAuth mode)."""
    if not oauth:
        return name
    for decl in context.tools or ():
        if decl.name.lower() == name.lower():
            return decl.name
    return name
