"""The cross-model transform every adapter applies before converting (reference §3.7).

A conversation may switch models mid-session, so before a request the transcript is adjusted for
the *target* model: images become placeholders for text-only models, thinking from other models
is dropped, provider signatures from other models are removed, tool-call ids are rewritten into
the target API's alphabet (and the matching results follow), errored/aborted turns are left out,
and tool calls that never got a result receive a synthetic error result.

The input messages are never mutated: changed messages are shallow copies with new content lists.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pi_host.protocol import TextContent, ToolResultMessage

IMAGE_PLACEHOLDER = "(image omitted: the current model does not accept images)"
MISSING_RESULT = "No result was provided for this tool call."

IdNormalizer = Callable[[str, Any, Any], str]
"""``(tool_call_id, target_model, source_assistant) -> new id``."""


# --- text hygiene ---------------------------------------------------------------------------------

_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def scrub_surrogates(text: str) -> str:
    """Drop unpaired UTF-16 surrogates (Python strings hold code points, so any surrogate is lone)."""
    if not text:
        return text
    return _LONE_SURROGATE.sub("", text) if _LONE_SURROGATE.search(text) else text


def scrub_body(body: Any) -> Any:
    """A request body with unpaired surrogates removed from every string (reference §2.4).

    One orjson encode finds out whether there is anything to do (it rejects lone surrogates), so
    the usual clean body costs a single fast pass and is returned as is.
    """
    import orjson

    try:
        orjson.dumps(body)
        return body
    except TypeError:  # orjson.JSONEncodeError: a lone surrogate (or a value JSON cannot hold)
        pass

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return scrub_surrogates(value)
        if isinstance(value, dict):
            return {key: walk(item) for key, item in value.items()}
        if isinstance(value, list):
            return [walk(item) for item in value]
        return value

    return walk(body)


# --- tool-call id normalisation -----------------------------------------------------------------

_NOT_ANTHROPIC = re.compile(r"[^a-zA-Z0-9_-]")


def short_hash(text: str, length: int = 8) -> str:
    import hashlib  # only for over-long tool call ids

    return hashlib.sha256(text.encode()).hexdigest()[:length]


def normalize_anthropic_id(tool_call_id: str, model: Any = None, source: Any = None) -> str:
    """``[^a-zA-Z0-9_-]`` → ``_``, at most 64 characters (Anthropic and Bedrock)."""
    return _NOT_ANTHROPIC.sub("_", tool_call_id)[:64]


def normalize_completions_id(tool_call_id: str, model: Any = None, source: Any = None) -> str:
    """openai-completions: ``call|item`` becomes ``call_item`` (≤ 40 with a hash when longer);
    provider ``openai`` cuts other ids to 40; anything else passes unchanged."""
    if "|" in tool_call_id:
        call, _, item = tool_call_id.partition("|")
        joined = _NOT_ANTHROPIC.sub("_", f"{call}_{item}")
        if len(joined) <= 40:
            return joined
        head = _NOT_ANTHROPIC.sub("_", call)[:31]
        return f"{head}_{short_hash(tool_call_id)}"[:40]
    if getattr(model, "provider", None) == "openai":
        return tool_call_id[:40]
    return tool_call_id


def normalize_responses_id(tool_call_id: str, model: Any = None, source: Any = None) -> str:
    """openai-responses: ``call_id|item_id``, each part sanitised, ≤ 64, no trailing ``_``; the
    item id must start with ``fc_`` (a foreign one becomes ``fc_<hash>``)."""
    if "|" in tool_call_id:
        call, _, item = tool_call_id.partition("|")
    else:
        call, item = tool_call_id, ""
    call = _NOT_ANTHROPIC.sub("_", call)[:64].rstrip("_") or f"call_{short_hash(tool_call_id)}"
    if item.startswith("fc_"):
        item = _NOT_ANTHROPIC.sub("_", item)[:64].rstrip("_")
    else:
        item = f"fc_{short_hash(tool_call_id, 24)}"
    return f"{call}|{item}"


_GEMINI_VERSION = re.compile(r"gemini-(\d+)")


def normalize_google_id(tool_call_id: str, model: Any = None, source: Any = None) -> str:
    """Google: Anthropic rules for ``claude-*``, ``gpt-oss-*`` and Gemini ≥ 3 ids, else unchanged."""
    model_id = (getattr(model, "id", "") or "").lower()
    match = _GEMINI_VERSION.search(model_id)
    if model_id.startswith(("claude-", "gpt-oss-")) or (match and int(match.group(1)) >= 3):
        return normalize_anthropic_id(tool_call_id)
    return tool_call_id


NORMALIZERS: dict[str, IdNormalizer] = {
    "anthropic-messages": normalize_anthropic_id,
    "bedrock-converse-stream": normalize_anthropic_id,
    "openai-completions": normalize_completions_id,
    "openai-responses": normalize_responses_id,
    "azure-openai-responses": normalize_responses_id,
    "openai-codex-responses": normalize_responses_id,
    "google-generative-ai": normalize_google_id,
    "google-vertex": normalize_google_id,
}


# --- the transform --------------------------------------------------------------------------------


def is_same_model(message: Any, model: Any) -> bool:
    return (
        getattr(message, "provider", None) == getattr(model, "provider", None)
        and getattr(message, "api", None) == getattr(model, "api", None)
        and getattr(message, "model", None) == getattr(model, "id", None)
    )


def _replace_images(content: Any) -> Any:
    """One placeholder text per run of consecutive images."""
    if isinstance(content, str) or not any(getattr(b, "type", None) == "image" for b in content):
        return content
    out: list[Any] = []
    previous_image = False
    for block in content:
        if block.type == "image":
            if not previous_image:
                out.append(TextContent(text=IMAGE_PLACEHOLDER))
            previous_image = True
        else:
            out.append(block)
            previous_image = False
    return out


def _transform_assistant(
    message: Any, model: Any, normalize: IdNormalizer | None, id_map: dict[str, str]
) -> Any:
    same = is_same_model(message, model)
    content: list[Any] = []
    changed = False
    for block in message.content:
        kind = block.type
        if kind == "thinking":
            if not same:
                changed = True
                continue
            if not block.redacted and not block.thinking_signature and not block.thinking.strip():
                changed = True
                continue
            content.append(block)
        elif kind == "text":
            if not same and block.text_signature is not None:
                block = block.model_copy(update={"text_signature": None})
                changed = True
            content.append(block)
        elif kind == "toolCall":
            if not same:
                update: dict[str, Any] = {}
                if block.thought_signature is not None:
                    update["thought_signature"] = None
                if normalize is not None:
                    new_id = normalize(block.id, model, message)
                    if new_id != block.id:
                        id_map[block.id] = new_id
                        update["id"] = new_id
                if update:
                    block = block.model_copy(update=update)
                    changed = True
            content.append(block)
        else:
            content.append(block)
    if not changed:
        return message
    return message.model_copy(update={"content": content})


def transform_messages(
    messages: list[Any], model: Any, normalize: IdNormalizer | None | str = "auto"
) -> list[Any]:
    """The transcript adjusted for ``model`` (reference §3.7).

    ``normalize`` rewrites tool-call ids of other models' calls; ``"auto"`` picks the rule for
    ``model.api`` from :data:`NORMALIZERS`, ``None`` keeps ids.
    """
    if normalize == "auto":
        normalize = NORMALIZERS.get(getattr(model, "api", ""))
    vision = "image" in (getattr(model, "input", None) or ())
    id_map: dict[str, str] = {}
    out: list[Any] = []
    pending: dict[str, Any] = {}  # tool-call id -> call, awaiting a result
    held: list[Any] = []  # system messages seen while results are pending

    def flush_missing() -> None:
        for call_id, call in pending.items():
            out.append(
                ToolResultMessage(
                    tool_call_id=call_id,
                    tool_name=call.name,
                    content=[TextContent(text=MISSING_RESULT)],
                    is_error=True,
                )
            )
        pending.clear()
        out.extend(held)
        held.clear()

    for message in messages:
        role = getattr(message, "role", None)
        if role == "assistant":
            if message.stop_reason in ("error", "aborted"):
                continue
            flush_missing()
            message = _transform_assistant(message, model, normalize, id_map)  # type: ignore[arg-type]
            out.append(message)
            for block in message.content:
                if block.type == "toolCall":
                    pending[block.id] = block
        elif role == "toolResult":
            update: dict[str, Any] = {}
            new_id = id_map.get(message.tool_call_id)
            if new_id is not None:
                update["tool_call_id"] = new_id
            if not vision:
                content = _replace_images(message.content)
                if content is not message.content:
                    update["content"] = content
            if update:
                message = message.model_copy(update=update)
            pending.pop(message.tool_call_id, None)
            out.append(message)
            if not pending and held:
                out.extend(held)
                held.clear()
        elif role == "system":
            if pending:
                held.append(message)
            else:
                out.append(message)
        else:
            if role == "user":
                flush_missing()
                if not vision:
                    content = _replace_images(message.content)
                    if content is not message.content:
                        message = message.model_copy(update={"content": content})
            out.append(message)
    flush_missing()
    return out
