"""Building a ``google-generative-ai`` request (reference §3.6).

The prompt goes in ``systemInstruction`` (later system messages always fold into it), tools in
``functionDeclarations`` with ``parametersJsonSchema``, the transcript in ``contents`` with roles
``user`` and ``model``. Tool results are ``functionResponse`` parts, consecutive ones in one user
turn. Thought signatures are replayed only to the model that produced them, and only when they
look like base64.
"""

from __future__ import annotations

import re
from typing import Any

from pi_host.lib.llm.strict_schema import strict_sampling, tool_parameters
from pi_host.lib.llm.tokens import clamp_thinking_level, map_level, thinking_budget
from pi_host.protocol.transcript import replay_system

TOOL_IMAGES_CAPTION = "Images returned by the tool call above:"
SKIP_SIGNATURE = "skip_thought_signature_validator"
"""Google's documented placeholder for function calls whose signature was not produced by this
model (Gemini 3 rejects unsigned calls in the current turn otherwise)."""

_BASE64 = re.compile(r"^[A-Za-z0-9+/_-]*={0,2}$")
_VERSION = re.compile(r"(gemini|gemma)-(\d+)")
_GEMINI_MAJOR = re.compile(r"^gemini(?:-live)?-(\d+)")

_BUDGETS = {
    "2.5-pro": {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768},
    "2.5-flash-lite": {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576},
    "2.5-flash": {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576},
}


def major_version(model_id: str) -> tuple[str, int] | None:
    match = _VERSION.search(model_id.lower())
    return (match.group(1), int(match.group(2))) if match else None


def uses_thinking_level(model_id: str) -> bool:
    """Gemini 3+ and Gemma 4+ take ``thinkingLevel``; older models take ``thinkingBudget``."""
    version = major_version(model_id)
    if version is None:
        return False
    family, number = version
    return number >= 3 if family == "gemini" else number >= 4


def strict_tools(model_id: str) -> bool:
    """Gemini 3+ enforces a function's required parameters in the ``VALIDATED`` calling mode, so
    tools that ask for constrained sampling go out strict there (pi's rule: the id starts with
    ``gemini-<major>``)."""
    match = _GEMINI_MAJOR.match(model_id.lower())
    return bool(match) and int(match.group(1)) >= 3


def nests_result_images(model_id: str) -> bool:
    version = major_version(model_id)
    return bool(version and version[0] == "gemini" and version[1] >= 3)


def valid_signature(signature: str | None) -> bool:
    return bool(signature) and len(signature) % 4 == 0 and bool(_BASE64.match(signature))  # type: ignore[arg-type]


def _same_model(message: Any, model: Any) -> bool:
    return message.provider == model.provider and message.model == model.id


def _sends_call_ids(model_id: str) -> bool:
    return model_id.lower().startswith(("claude-", "gpt-oss-"))


# --- contents ---------------------------------------------------------------------------------------


def _inline(block: Any) -> dict[str, Any]:
    return {"inlineData": {"mimeType": block.mime_type, "data": block.data}}


def _user_parts(message: Any, vision: bool) -> list[dict[str, Any]]:
    content = message.content
    if isinstance(content, str):
        return [{"text": content}] if content.strip() else []
    parts: list[dict[str, Any]] = []
    for block in content:
        if block.type == "text" and block.text:
            parts.append({"text": block.text})
        elif block.type == "image" and vision:
            parts.append(_inline(block))
    return parts


def _model_parts(message: Any, model: Any) -> list[dict[str, Any]]:
    same = _same_model(message, model)
    level_model = uses_thinking_level(model.id)
    send_ids = _sends_call_ids(model.id)
    parts: list[dict[str, Any]] = []
    for block in message.content:
        kind = block.type
        if kind == "thinking":
            if not block.thinking.strip():
                continue
            part: dict[str, Any] = {"thought": True, "text": block.thinking}
            if same and valid_signature(block.thinking_signature):
                part["thoughtSignature"] = block.thinking_signature
            parts.append(part)
        elif kind == "text":
            if not block.text:
                continue
            part = {"text": block.text}
            if same and valid_signature(block.text_signature):
                part["thoughtSignature"] = block.text_signature
            parts.append(part)
        elif kind == "toolCall":
            call: dict[str, Any] = {"name": block.name, "args": block.arguments or {}}
            if send_ids:
                call["id"] = block.id
            part = {"functionCall": call}
            if same and valid_signature(block.thought_signature):
                part["thoughtSignature"] = block.thought_signature
            elif level_model:
                part["thoughtSignature"] = SKIP_SIGNATURE
            parts.append(part)
    return parts


def _result_part(message: Any, model: Any, nest_images: bool) -> tuple[dict[str, Any], list[Any]]:
    texts = [b.text for b in message.content if b.type == "text"]
    images = [b for b in message.content if b.type == "image"] if model.supports_images() else []
    text = "\n".join(texts)
    if not text and images:
        text = "(see attached image)"
    response: dict[str, Any] = {
        "name": message.tool_name,
        "response": {"error" if message.is_error else "output": text},
    }
    if _sends_call_ids(model.id):
        response["id"] = message.tool_call_id
    leftover: list[Any] = []
    if images and nest_images:
        response["parts"] = [_inline(b) for b in images]
    else:
        leftover = images
    return {"functionResponse": response}, leftover


def convert_contents(model: Any, messages: list[Any]) -> list[dict[str, Any]]:
    vision = model.supports_images()
    nest = nests_result_images(model.id)
    contents: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    result_images: list[Any] = []

    def flush() -> None:
        if results:
            contents.append({"role": "user", "parts": list(results)})
            results.clear()
        if result_images:
            contents.append(
                {
                    "role": "user",
                    "parts": [{"text": TOOL_IMAGES_CAPTION}] + [_inline(b) for b in result_images],
                }
            )
            result_images.clear()

    for message in messages:
        role = getattr(message, "role", None)
        if role == "toolResult":
            part, leftover = _result_part(message, model, nest)
            results.append(part)
            result_images.extend(leftover)
            continue
        if role == "system":
            continue
        flush()
        if role == "user":
            parts = _user_parts(message, vision)
            if parts:
                contents.append({"role": "user", "parts": parts})
        elif role == "assistant":
            parts = _model_parts(message, model)
            if parts:
                contents.append({"role": "model", "parts": parts})
    flush()
    return contents


# --- tools and config ------------------------------------------------------------------------------


def schema_for_google(schema: Any) -> Any:
    """JSON Schema with ``const`` rewritten as a one-value ``enum`` (Gemini rejects ``const``)."""
    if isinstance(schema, dict):
        out = {}
        for key, value in schema.items():
            if key == "const":
                out["enum"] = [value]
            else:
                out[key] = schema_for_google(value)
        return out
    if isinstance(schema, list):
        return [schema_for_google(item) for item in schema]
    return schema


def _budget_table(model_id: str) -> dict[str, int] | None:
    lowered = model_id.lower()
    for fragment in ("2.5-flash-lite", "2.5-flash", "2.5-pro"):
        if fragment in lowered:
            return _BUDGETS[fragment]
    return None


def thinking_config(model: Any, level: str, budgets: dict[str, int] | None) -> dict[str, Any] | None:
    if not model.reasoning:
        return None
    if uses_thinking_level(model.id):
        if level == "off":
            value = (model.thinking_level_map or {}).get("off")
            return {"thinkingLevel": value} if isinstance(value, str) else None
        mapped = map_level(model, level)
        if mapped == level:  # no explicit map: pi level names in Google's casing
            mapped = "HIGH" if level in ("xhigh", "max") else level.upper()
        return {"includeThoughts": True, "thinkingLevel": mapped}
    if level == "off":
        return {"thinkingBudget": 0}
    key = "high" if level in ("xhigh", "max") else level
    if budgets and (isinstance(budgets.get(level), int) or isinstance(budgets.get(key), int)):
        budget = thinking_budget(level, budgets)
    else:
        table = _budget_table(model.id)
        budget = table[key] if table else -1
    return {"includeThoughts": True, "thinkingBudget": budget}


def build_body(
    model: Any, messages: list[Any], tools: list[Any], options: Any, max_tokens: int
) -> dict[str, Any]:
    level = clamp_thinking_level(model, options.thinking_level)
    body: dict[str, Any] = {"contents": convert_contents(model, messages)}
    prompt = replay_system(messages).render()
    if prompt:
        body["systemInstruction"] = {"parts": [{"text": prompt}]}
    if tools:
        supported = strict_tools(model.id)
        strict = [strict_sampling(t, supported) for t in tools]
        body["tools"] = [
            {
                "functionDeclarations": [
                    {
                        "name": t.name,
                        "description": t.description,
                        "parametersJsonSchema": schema_for_google(tool_parameters(t, s)),
                    }
                    for t, s in zip(tools, strict, strict=True)
                ]
            }
        ]
        if any(strict):
            # Strict schemas are only enforced in the VALIDATED mode (pi sends no mode otherwise).
            body["toolConfig"] = {"functionCallingConfig": {"mode": "VALIDATED"}}
    config: dict[str, Any] = {"maxOutputTokens": max_tokens}
    if options.temperature is not None:
        config["temperature"] = options.temperature
    thinking = thinking_config(model, level, options.thinking_budgets)
    if thinking is not None:
        config["thinkingConfig"] = thinking
    if model.sampling_params:
        config.update(model.sampling_params)
    body["generationConfig"] = config
    return body
