"""Building an ``openai-responses`` request body (reference §3.5).

The transcript becomes ``input`` items: messages, ``reasoning`` items replayed from the
``thinkingSignature`` (the serialized item with its encrypted content), ``function_call`` items
whose ``call_id``/``id`` come from the ``call_id|item_id`` tool-call id, and
``function_call_output`` items for tool results.
"""

from __future__ import annotations

import json
from typing import Any

from pi_host.protocol.transcript import patch_text, split_system
from pi_provider_openai import thinking
from pi_provider_openai.shared import add_sampling_params

IMAGE_ONLY_RESULT = "(see attached image)"


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


def convert_input(model: Any, messages: list[Any], compat: dict[str, Any]) -> list[dict[str, Any]]:
    vision = model.supports_images()
    prompt, rest = split_system(messages, bool(compat.get("supportsMidConvoSystemMessages")))
    role = "developer" if model.reasoning and compat.get("supportsDeveloperRole", True) else "system"
    items: list[dict[str, Any]] = []
    if prompt:
        items.append({"role": role, "content": prompt})
    for number, message in enumerate(rest):
        kind = getattr(message, "role", None)
        if kind == "user":
            item = _user_item(message, vision)
            if item:
                items.append(item)
        elif kind == "assistant":
            items.extend(_assistant_items(message, number))
        elif kind == "toolResult":
            items.append(_tool_output(message, vision))
        elif kind == "system":
            text = patch_text(message)
            if text:
                items.append({"role": role, "content": text})
    return items


def build_body(
    model: Any, messages: list[Any], tools: list[Any], options: Any, compat: dict[str, Any], max_tokens: int
) -> dict[str, Any]:
    level = thinking.clamp_level(model, options.thinking_level)
    body: dict[str, Any] = {
        "model": model.id,
        "input": convert_input(model, messages, compat),
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
    if tools:
        body["tools"] = [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters,
                "strict": False,
            }
            for t in tools
        ]
    if model.reasoning:
        if level != "off":
            effort = thinking.mapped_value(model, level)
            body["reasoning"] = {"effort": effort, "summary": "auto"}
            body["include"] = ["reasoning.encrypted_content"]
        else:
            body["reasoning"] = {"effort": thinking.mapped_value(model, "off") or "none"}
    return add_sampling_params(body, model, level)
