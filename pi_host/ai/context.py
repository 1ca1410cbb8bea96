"""What one request sends: :class:`Context` (prompt, messages, tools), tools declared from JSON
Schema or a pydantic model, argument validation, and image blocks.

A context is plain data: it serialises with :meth:`Context.to_json` and loads back with
:meth:`Context.from_json`, so a conversation can be stored and continued later, with any model.
"""

from __future__ import annotations

import base64
import mimetypes
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_host.loop.validation import format_problems, validate_arguments
from pi_host.protocol.messages import ImageContent, SystemMessage, ToolCall, ToolDecl, parse_message
from pi_host.protocol.model import LlmContext
from pi_host.protocol.transcript import replay_system

__all__ = [
    "Context",
    "ToolArgumentsError",
    "get_current_system_prompt",
    "get_current_tools",
    "image_from_bytes",
    "image_from_file",
    "parameters_schema",
    "tool",
    "validate_tool_arguments",
    "validate_tool_call",
]


@dataclass
class Context:
    """A conversation for a provider request (pi's ``Context``).

    ``system_prompt`` and ``tools`` are shorthand for a leading system message: when ``messages``
    does not start with one, :meth:`to_llm` puts one there. Messages may be typed messages
    (``pi_host.ai.UserMessage``...) or pi's JSON dicts.
    """

    messages: list[Any] = field(default_factory=list)
    system_prompt: str | None = None
    tools: list[ToolDecl] = field(default_factory=list)

    def to_llm(self) -> LlmContext:
        """The transcript a provider receives: system messages in the list, current tools."""
        messages = [parse_message(m) if isinstance(m, dict) else m for m in self.messages]
        starts_with_system = bool(messages) and getattr(messages[0], "role", None) == "system"
        if (self.system_prompt or self.tools) and not starts_with_system:
            head = SystemMessage(content=self.system_prompt or "", tools_added=list(self.tools) or None)
            messages.insert(0, head)
        return LlmContext(messages=messages, tools=list(replay_system(messages).tools.values()))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "messages": [m if isinstance(m, dict) else m.to_json() for m in self.messages]
        }
        if self.system_prompt is not None:
            data["systemPrompt"] = self.system_prompt
        if self.tools:
            data["tools"] = [t.to_json() for t in self.tools]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Context:
        return cls(
            messages=[parse_message(m) for m in data.get("messages") or ()],
            system_prompt=data.get("systemPrompt"),
            tools=[ToolDecl.model_validate(t) for t in data.get("tools") or ()],
        )


def to_llm_context(context: Context | LlmContext | list[Any]) -> LlmContext:
    """Any accepted context shape as the provider's :class:`LlmContext`."""
    if isinstance(context, LlmContext):
        return context
    if isinstance(context, list):
        context = Context(messages=context)
    return context.to_llm()


# --- tools ------------------------------------------------------------------------------------


def parameters_schema(parameters: dict[str, Any] | type | None) -> dict[str, Any]:
    """A tool's JSON Schema: a dict as given, a pydantic model's schema, or an empty object."""
    if parameters is None:
        return {"type": "object", "properties": {}}
    if isinstance(parameters, dict):
        return parameters
    schema_of = getattr(parameters, "model_json_schema", None)
    if schema_of is None:
        raise TypeError(f"tool parameters must be a JSON Schema dict or a pydantic model, not {parameters!r}")
    schema = dict(schema_of())
    schema.pop("title", None)  # the class name says nothing to the model
    return schema


def tool(
    name: str,
    description: str = "",
    parameters: dict[str, Any] | type | None = None,
    *,
    constrained_sampling: dict[str, Any] | None = None,
) -> ToolDecl:
    """A tool as the model sees it; ``parameters`` is JSON Schema or a pydantic model class."""
    return ToolDecl(
        name=name,
        description=description,
        parameters=parameters_schema(parameters),
        constrained_sampling=constrained_sampling,
    )


class ToolArgumentsError(ValueError):
    """The model's arguments do not fit the tool's schema; the text lists every problem and the
    arguments received (send it back as an error tool result so the model can retry)."""


def validate_tool_arguments(decl: ToolDecl, call: ToolCall) -> dict[str, Any]:
    """``call``'s arguments checked against ``decl``'s schema, loosely typed values coerced
    (``"3"`` for an integer, one value for an array); raises :class:`ToolArgumentsError`."""
    if call.arguments_error:
        raise ToolArgumentsError(f'Invalid arguments for tool "{call.name}": {call.arguments_error}')
    args, problems = validate_arguments(decl.parameters, call.arguments)
    if problems:
        raise ToolArgumentsError(format_problems(call.name, problems, call.arguments))
    return args


def validate_tool_call(tools: list[ToolDecl], call: ToolCall) -> dict[str, Any]:
    """Find ``call``'s tool in ``tools`` and validate its arguments (see above)."""
    decl = next((t for t in tools if t.name == call.name), None)
    if decl is None:
        raise ToolArgumentsError(f'Tool "{call.name}" not found')
    return validate_tool_arguments(decl, call)


# --- images -----------------------------------------------------------------------------------


def image_from_bytes(data: bytes, mime_type: str) -> ImageContent:
    return ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime_type)


def image_from_file(path: str | Path, mime_type: str | None = None) -> ImageContent:
    """An image block for a user message or a tool result (the type guessed from the name)."""
    path = Path(path)
    kind = mime_type or mimetypes.guess_type(path.name)[0]
    if not kind or not kind.startswith("image/"):
        raise ValueError(f"{path}: not an image type ({kind or 'unknown'}); pass mime_type=")
    return image_from_bytes(path.read_bytes(), kind)


# --- the transcript's prompt ------------------------------------------------------------------


def get_current_system_prompt(messages: list[Any]) -> str:
    """The prompt the system messages of ``messages`` declare, patches applied in order."""
    return replay_system(messages).render()


def get_current_tools(messages: list[Any]) -> list[ToolDecl]:
    """The tools the system messages of ``messages`` declare now."""
    return list(replay_system(messages).tools.values())
