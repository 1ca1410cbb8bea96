"""Building the Messages API request body and headers (reference §3.3)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from pi_host.lib.llm.http import user_agent
from pi_host.lib.llm.tokens import apply_budget, clamp_max_tokens, clamp_thinking_level, thinking_budget
from pi_host.lib.llm.transform import scrub_surrogates, transform_messages
from pi_host.protocol.transcript import replay_system
from pi_provider_anthropic import system_messages as in_place
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
# Claude Code 2.x's tool names in its casing: an OAuth request names tools as Claude Code does
# (matched case-insensitively; other names are sent as they are).
CLAUDE_CODE_TOOLS = (
    "Read", "Write", "Edit", "Bash", "Grep", "Glob", "AskUserQuestion", "EnterPlanMode",
    "ExitPlanMode", "KillShell", "NotebookEdit", "Skill", "Task", "TaskOutput", "TodoWrite",
    "WebFetch", "WebSearch",
)  # fmt: skip
_CLAUDE_CODE_NAMES = {name.lower(): name for name in CLAUDE_CODE_TOOLS}

_EFFORT = {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}


def claude_code_name(name: str) -> str:
    return _CLAUDE_CODE_NAMES.get(name.lower(), name)


def same_name(name: str) -> str:
    return name


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


def _assistant_content(message: Any, model: Any, rename: Callable[[str], str]) -> list[dict[str, Any]]:
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
                    "name": rename(block.name),
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
    messages: list[Any],
    model: Any,
    rename: Callable[[str], str],
    levels: dict[int, str] | None = None,
    tool_changes: in_place.ToolConverter | None = None,
) -> list[dict[str, Any]]:
    """The ``messages`` list. ``levels``, when given, receives ``{position: effort}`` for each
    converted reply of this provider that recorded the effort it was made with.

    System messages still in ``messages`` are sent in place (``supportsMidConvoSystemMessages``),
    with native tool changes when ``tool_changes`` converts tools. Each is held back until just
    before the next reply that is sent (a reply that converts to nothing does not count), or the
    end: Anthropic wants each ``tool_result`` right after its ``tool_use``, so nothing may come
    between them. A change made before a user message thus follows it on the wire."""
    out: list[dict[str, Any]] = []
    held: list[dict[str, Any]] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        role = getattr(message, "role", None)
        if role == "system":
            converted = in_place.system_message(message, tool_changes, rename)
            if converted is not None:
                held.append(converted)
        elif role == "user":
            content = _user_content(message.content)
            if content is not None:
                out.append({"role": "user", "content": content})
        elif role == "assistant":
            content = _assistant_content(message, model, rename)
            if content:
                out.extend(held)
                held.clear()
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
    out.extend(held)
    return out


CACHED_LAST_BLOCKS = ("text", "image", "tool_result", "tool_addition", "tool_removal")


def _place_last_cache_control(messages: list[dict[str, Any]], control: dict[str, Any]) -> None:
    """The conversation's cache breakpoint: the last block of the last message, when that is a
    user message or a system message sent in place."""
    if not messages or messages[-1]["role"] not in ("user", "system"):
        return
    last = messages[-1]
    if isinstance(last["content"], str):
        last["content"] = [{"type": "text", "text": last["content"]}]
    block = last["content"][-1] if last["content"] else None
    if block is not None and block["type"] in CACHED_LAST_BLOCKS:
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


def _split_system(
    model: Any, messages: list[Any], context_tools: list[Any] | None
) -> tuple[str, list[Any], list[Any], bool]:
    """``(system prompt, messages to convert, initial tools, native tool changes)``.

    Without ``supportsMidConvoSystemMessages`` every system message folds into the prompt (the
    transcript replayed). With it the leading one is the prompt and later ones stay in place;
    tool changes are native when the model also has ``supportsMidConvoToolChanges`` and tools
    are declared with the prompt (system_messages.py says why)."""
    if not compat(model, "supportsMidConvoSystemMessages", False):
        rest = [m for m in messages if getattr(m, "role", None) != "system"]
        return replay_system(messages).render(), rest, [], False
    head, rest = in_place.split_leading(messages)
    prompt = in_place.prompt_text(head) if head is not None else ""
    initial = in_place.initial_tools(head, messages, context_tools)
    native = bool(initial) and bool(compat(model, "supportsMidConvoToolChanges", False))
    return prompt, rest, initial, native


def _current_tools(messages: list[Any], context_tools: list[Any] | None) -> list[Any]:
    """The tools available now: the context's list, else the transcript's declarations."""
    return list(context_tools) if context_tools else in_place.current_tools(messages)


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
    rename = claude_code_name if oauth else same_name
    messages = transform_messages(list(context.messages), model)
    prompt, rest, initial, native = _split_system(model, messages, context.tools)
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
    if prompt:
        system.append({"type": "text", "text": scrub_surrogates(prompt)})
    if control:
        # every system block is marked, the Claude Code identity too (as pi does for OAuth)
        for block in system:
            block["cache_control"] = dict(control)
    if system:
        body["system"] = system

    eager = compat(model, "supportsEagerToolInputStreaming", True)
    strict_ok = bool(compat(model, "supportsStrictTools", False))
    preferred_any = False

    def definitions(decls: list[Any]) -> list[dict[str, Any]]:
        nonlocal preferred_any
        tools, preferred = convert_tools(decls, rename, eager, strict_ok, plain_preferred)
        preferred_any |= preferred
        return tools

    # Native tool changes: the initial tools and the placeholder, never changed afterwards.
    decls = initial if native else _current_tools(messages, context.tools)
    if decls:
        tools = definitions(decls)
        if control and compat(model, "supportsCacheControlOnTools", True):
            tools[-1]["cache_control"] = dict(control)
        body["tools"] = [*tools, in_place.placeholder_tool()] if native else tools

    levels: dict[int, str] = {}
    converted = convert_messages(
        rest, model, rename, levels if markers else None, definitions if native else None
    )
    if preferred_strict is not None:
        preferred_strict.append(preferred_any)
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
    if native:
        betas.append(in_place.BETA_INLINE_TOOLS)
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
