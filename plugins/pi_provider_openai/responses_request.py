"""Building an ``openai-responses`` request body (reference §3.5).

The transcript becomes ``input`` items: messages, ``reasoning`` items replayed from the
``thinkingSignature`` (the serialized item with its encrypted content), ``function_call`` items
whose ``call_id``/``id`` come from the ``call_id|item_id`` tool-call id, and
``function_call_output`` items for tool results.

Two model flags change where things go (pi 1.6.0's behaviour):

* ``supportsAdditionalTools`` with ``supportsMidConvoSystemMessages``: tools are declared in the
  conversation, not in the request's ``tools``: an ``additional_tools`` item (role ``developer``)
  opens the input, and each later system message that adds tools brings its own item, preceded
  by a note that earlier tools stay available. Removals cannot be expressed by such items, so
  they are announced in the system message's text. The request prefix stays cacheable however
  the tool set changes.
* ``supportsMidConvoEffort``: the thinking level goes in ``configuration_update`` items — one
  at the end of the input for this reply and one before each earlier reply of the same model
  with the level it was made with (``providerThinkingLevel``) — while ``reasoning.effort`` stays
  at a fixed "medium", so changing the level keeps the prompt cache. Sign in with ChatGPT on the
  ``openai`` provider refuses these items and gets the effort in the request as before.
"""

from __future__ import annotations

import json
from typing import Any

from pi_host.lib.llm.strict_schema import strict_sampling, tool_parameters
from pi_host.protocol.transcript import patch_text, replay_system, split_system
from pi_provider_openai import thinking
from pi_provider_openai.shared import add_sampling_params

IMAGE_ONLY_RESULT = "(see attached image)"
REQUEST_EFFORT_WITH_UPDATES = "medium"
"""``reasoning.effort`` while ``configuration_update`` items carry the level (part of the cached
prefix, so it never changes)."""
OPENAI_BASE_URL = "https://api.openai.com/v1"
# Model-facing notes for tool changes declared in the conversation (pi-host's own wording).
TOOLS_UPDATE_NOTE = (
    "More tools follow. Every tool declared earlier is still available unless it was withdrawn; "
    "a tool declared again is available again, with its newest definition."
)


def split_call_id(call_id: str) -> tuple[str, str | None]:
    first, sep, second = call_id.partition("|")
    return first, (second if sep and second else None)


def text_signature(item_id: str | None, phase: str | None) -> str | None:
    """What a text block keeps of its output message: the item id, plus the phase when there is
    one (then as a small JSON object)."""
    if not item_id:
        return None
    if phase:
        return json.dumps({"v": 1, "id": item_id, "phase": phase}, separators=(",", ":"))
    return item_id


def parse_text_signature(signature: str | None) -> tuple[str | None, str | None]:
    if not signature:
        return None, None
    if signature.startswith("{"):
        try:
            data = json.loads(signature)
        except ValueError:
            return None, None
        return data.get("id"), data.get("phase")
    return signature, None


def _image(block: Any) -> dict[str, Any]:
    return {
        "type": "input_image",
        "detail": "auto",
        "image_url": f"data:{block.mime_type};base64,{block.data}",
    }


def _user_item(message: Any, vision: bool) -> dict[str, Any] | None:
    content = message.content
    if isinstance(content, str):
        return (
            {"role": "user", "content": [{"type": "input_text", "text": content}]}
            if content.strip()
            else None
        )
    parts: list[dict[str, Any]] = []
    for block in content:
        if block.type == "text" and block.text:
            parts.append({"type": "input_text", "text": block.text})
        elif block.type == "image" and vision:
            parts.append(_image(block))
    return {"role": "user", "content": parts} if parts else None


def _assistant_items(message: Any, number: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for position, block in enumerate(message.content):
        kind = block.type
        if kind == "thinking":
            signature = block.thinking_signature
            if not signature:
                continue
            try:
                item = json.loads(signature)
            except ValueError:
                continue
            if isinstance(item, dict) and item.get("type") == "reasoning":
                items.append(item)
        elif kind == "text":
            if not block.text:
                continue
            item_id, phase = parse_text_signature(block.text_signature)
            if not item_id or not item_id.startswith("msg"):
                item_id = f"msg_{number}_{position}"
            item = {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": block.text, "annotations": []}],
                "status": "completed",
                "id": item_id,
            }
            if phase:
                item["phase"] = phase
            items.append(item)
        elif kind == "toolCall":
            call_id, item_id = split_call_id(block.id)
            item = {
                "type": "function_call",
                "call_id": call_id,
                "name": block.name,
                "arguments": json.dumps(block.arguments or {}, ensure_ascii=False, separators=(",", ":")),
            }
            if item_id:
                item["id"] = item_id
            items.append(item)
    return items


def _tool_output(message: Any, vision: bool) -> dict[str, Any]:
    call_id, _ = split_call_id(message.tool_call_id)
    texts = [b.text for b in message.content if b.type == "text"]
    images = [b for b in message.content if b.type == "image"]
    text = "\n".join(texts)
    output: Any
    if images and vision:
        output = ([{"type": "input_text", "text": text}] if text else []) + [_image(b) for b in images]
    else:
        output = text or (IMAGE_ONLY_RESULT if images else "")
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def convert_tools(
    tools: list[Any], supports_strict: bool, default_strict: Any = False
) -> list[dict[str, Any]]:
    """Function tools: strict where the tool asks for constrained sampling and the schema allows
    it, else ``default_strict``; no ``strict`` key at all when the model has no strict mode."""
    out = []
    for tool in tools:
        asked = strict_sampling(tool, supports_strict)
        strict = default_strict if asked is None else asked
        item: dict[str, Any] = {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool_parameters(tool, strict is True),
        }
        if supports_strict:
            item["strict"] = strict
        out.append(item)
    return out


def declares_tools_in_input(compat: dict[str, Any]) -> bool:
    return bool(compat.get("supportsMidConvoSystemMessages")) and bool(compat.get("supportsAdditionalTools"))


def configuration_effort(
    model: Any, options: Any, compat: dict[str, Any], level: str, off_too: bool = False
) -> str | None:
    """The effort ``configuration_update`` items carry for this reply, or None when the effort
    goes in ``reasoning.effort`` (no flag, thinking off, or Sign in with ChatGPT on ``openai``,
    whose backend refuses the items). ``off_too`` (the Codex API): thinking off is an update too,
    to the model's own ``off`` value or ``none`` (none at all when its map sets ``off`` to null),
    so switching thinking off keeps the prompt cache, as pi sends it."""
    if not compat.get("supportsMidConvoEffort") or (level == "off" and not off_too):
        return None
    key = options.api_key or ""
    if model.provider == "openai" and model.base_url == OPENAI_BASE_URL and key and not key.startswith("sk-"):
        return None
    levels = getattr(model, "thinking_level_map", None) or {}
    if level == "off":
        off = levels.get("off", "none")
        return off if isinstance(off, str) else None
    mapped = levels.get(level)
    return mapped if isinstance(mapped, str) else level


def _removal_note(names: list[str]) -> str:
    return "These tools have been withdrawn; do not call them any more: " + ", ".join(names) + "."


class _InputTools:
    """Tool declarations as ``additional_tools`` input items (see the module docstring)."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options
        self.declared = False
        self.withdrawn: list[str] = []

    def add(self, items: list[dict[str, Any]], tools: list[Any], role: str) -> None:
        self.withdrawn = [n for n in self.withdrawn if n not in {t.name for t in tools}]
        if not tools:
            return
        if self.declared:
            note = TOOLS_UPDATE_NOTE
            if self.withdrawn:  # restated, or small models call them again after a later load
                note += " Still withdrawn: " + ", ".join(self.withdrawn) + "."
            items.append({"role": role, "content": note})
        self.declared = True
        tools_json = convert_tools(tools, **self.options)
        items.append({"type": "additional_tools", "role": "developer", "tools": tools_json})

    def removed(self, message: Any) -> list[str]:
        added = {t.name for t in message.tools_added or ()}
        names = [ref.name for ref in message.tools_removed or () if ref.name not in added]
        self.withdrawn.extend(n for n in names if n not in self.withdrawn)
        return names


def _update(effort: str) -> dict[str, Any]:
    return {"type": "configuration_update", "reasoning": {"effort": effort}}


def convert_input(
    model: Any,
    messages: list[Any],
    compat: dict[str, Any],
    tools: list[Any] | None = None,
    effort: str | None = None,
    tool_options: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The ``input`` items. ``tools`` (the current tool set) is only used when tools are declared
    in the input: those no system message declares are declared with the prompt. ``effort``: the
    ``configuration_update`` effort of this reply, if any."""
    vision = model.supports_images()
    in_place = bool(compat.get("supportsMidConvoSystemMessages"))
    prompt, rest = split_system(messages, in_place)
    role = "developer" if model.reasoning and compat.get("supportsDeveloperRole", True) else "system"
    items: list[dict[str, Any]] = []
    declared = (
        _InputTools(tool_options or {"supports_strict": False}) if declares_tools_in_input(compat) else None
    )
    if declared is not None:
        head = replay_system(messages[: len(messages) - len(rest)]).tools
        named = {
            t.name for m in messages if getattr(m, "role", None) == "system" for t in m.tools_added or ()
        }
        undeclared = [t for t in tools or () if t.name not in named and t.name not in head]
        declared.add(items, [*head.values(), *undeclared], role)
    if prompt:
        items.append({"role": role, "content": prompt})
    for number, message in enumerate(rest):
        kind = getattr(message, "role", None)
        if kind == "user":
            item = _user_item(message, vision)
            if item:
                items.append(item)
        elif kind == "assistant":
            produced = _assistant_items(message, number)
            level = message.provider_thinking_level
            same = (message.provider, message.api, message.model) == (model.provider, model.api, model.id)
            if produced and effort is not None and same and level:
                items.append(_update(level))  # the level that reply was made with
            items.extend(produced)
        elif kind == "toolResult":
            items.append(_tool_output(message, vision))
        elif kind == "system":
            parts = [patch_text(message)]
            if declared is not None:
                declared.add(items, list(message.tools_added or ()), role)
                removed = declared.removed(message)
                if removed:
                    parts.append(_removal_note(removed))
            text = "\n\n".join(part for part in parts if part)
            if text:
                items.append({"role": role, "content": text})
    if effort is not None:
        items.append(_update(effort))
    return items


def build_body(
    model: Any,
    messages: list[Any],
    tools: list[Any],
    options: Any,
    compat: dict[str, Any],
    max_tokens: int,
    tool_options: dict[str, Any] | None = None,
    effort_updates: bool = True,
    off_as_update: bool = False,
) -> dict[str, Any]:
    """The request body. ``tool_options``: :func:`convert_tools`'s strict settings (the API's
    default when None); ``effort_updates``: whether the API takes ``configuration_update`` items
    (Azure's does not); ``off_as_update``: thinking off goes in them too (the Codex API)."""
    level = thinking.clamp_level(model, options.thinking_level)
    tool_options = tool_options or {"supports_strict": bool(compat.get("supportsStrictMode", False))}
    effort = None
    if model.reasoning and effort_updates:
        effort = configuration_effort(model, options, compat, level, off_too=off_as_update)
    body: dict[str, Any] = {
        "model": model.id,
        "input": convert_input(model, messages, compat, tools, effort, tool_options),
        "stream": True,
        "store": False,
    }
    if options.session_id and options.cache_retention != "none":
        body["prompt_cache_key"] = options.session_id
        if options.cache_retention == "long":
            body["prompt_cache_retention"] = "24h"
    if compat.get("supportsMaxOutputTokens", True):
        body["max_output_tokens"] = max_tokens
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if tools and not declares_tools_in_input(compat):
        body["tools"] = convert_tools(tools, **tool_options)
    if model.reasoning:
        if level != "off":
            value = REQUEST_EFFORT_WITH_UPDATES if effort is not None else thinking.mapped_value(model, level)
            body["reasoning"] = {"effort": value, "summary": "auto"}
            body["include"] = ["reasoning.encrypted_content"]
        elif off_as_update:  # the Codex API: off is the effort "none" (or the model's own value)
            off = (getattr(model, "thinking_level_map", None) or {}).get("off", "none")
            if effort is not None:  # carried by the update item
                body["reasoning"] = {"effort": REQUEST_EFFORT_WITH_UPDATES, "summary": "auto"}
            elif isinstance(off, str):  # a map that sets off to null: no reasoning field at all
                body["reasoning"] = {"effort": off, "summary": "auto"}
        else:
            body["reasoning"] = {"effort": thinking.mapped_value(model, "off") or "none"}
    return add_sampling_params(body, model, level)
