"""Messages and content blocks (reference §1).

Python attributes are snake_case; JSON uses pi's camelCase names. Unknown fields are kept so a
message written by a newer pi survives a round trip, and unknown roles load as
:class:`UnknownMessage` instead of failing. The classes are plain records
(:mod:`pi_host._record`), not pydantic models: they are built on every start and delta.
"""

from __future__ import annotations

import time
from typing import Any, Literal

from pi_host._record import Field, Record, RecordError

Number = int | float
"""JSON numbers keep their int/float form so ``0`` written by pi is written back as ``0``."""

StopReason = Literal["pending", "stop", "length", "toolUse", "error", "aborted", "deferred"]


def now_ms() -> int:
    """Unix epoch milliseconds, the timestamp unit of every message."""
    return int(time.time() * 1000)


def empty_list() -> list[Any]:
    return []


class PiModel(Record):
    """Base of every protocol class: camelCase JSON, unknown fields preserved, None omitted."""

    # Read like pi's plain objects: ``message["stopReason"]``, ``message["content"][0]["text"]``,
    # ``message.get("errorMessage")``; code ported from pi's TypeScript keeps its field names.
    def __getitem__(self, key: str) -> Any:
        value = self.get(key, _ABSENT)
        if value is _ABSENT:
            raise KeyError(key)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        """The field pi's JSON calls ``key`` (snake_case names work too); ``default`` when it is
        absent, as for a key pi leaves out."""
        name = type(self).field_names.get(key, key)
        value = self.__dict__.get(name, default) if name[:1] != "_" else default
        return default if value is None else value

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key, _ABSENT) is not _ABSENT


_ABSENT = object()


# --- content blocks -------------------------------------------------------------------------


class TextContent(PiModel):
    type: Literal["text"] = "text"
    text: str
    text_signature: str | None = None


class ThinkingContent(PiModel):
    type: Literal["thinking"] = "thinking"
    thinking: str
    thinking_signature: str | None = None
    redacted: bool | None = None


class ImageContent(PiModel):
    type: Literal["image"] = "image"
    data: str
    """Base64-encoded image bytes."""
    mime_type: str


class ToolCall(PiModel):
    type: Literal["toolCall"] = "toolCall"
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    thought_signature: str | None = None
    namespace: str | None = None
    arguments_error: str | None = None
    """Set when the streamed argument text was not a JSON object (reference §2.3)."""


Content = TextContent | ThinkingContent | ImageContent | ToolCall
"""A block of an assistant message, chosen by ``type``."""
UserContent = TextContent | ImageContent


# --- usage ------------------------------------------------------------------------------------


class Cost(PiModel):
    input: Number = 0
    output: Number = 0
    cache_read: Number = 0
    cache_write: Number = 0
    total: Number = 0
    total_from_provider: bool | None = None


class Usage(PiModel):
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cache_write_1h: int | None = Field(default=None, alias="cacheWrite1h")
    reasoning: int | None = None
    """A subset of ``output``; never add it again."""
    total_tokens: int = 0
    cost: Cost = Field(default_factory=Cost)

    def is_empty(self) -> bool:
        """All-zero usage means "unknown" (a server that streams none), not an empty context."""
        return not (self.input or self.output or self.cache_read or self.cache_write or self.total_tokens)


# --- messages ---------------------------------------------------------------------------------


class ToolDecl(PiModel):
    """A tool as declared to the model: plain JSON Schema parameters."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    constrained_sampling: dict[str, Any] | None = None


class ToolRef(PiModel):
    name: str


class SystemMessage(PiModel):
    """The transcript's prompt and tool declarations (reference §1.2).

    The leading system message holds the whole initial state; later ones are patches.
    """

    role: Literal["system"] = "system"
    content: str | list[TextContent] = ""
    sections: dict[str, str | None] | None = None
    tools_added: list[ToolDecl] | None = None
    tools_removed: list[ToolRef] | None = None
    timestamp: Number = Field(default_factory=now_ms)


class UserMessage(PiModel):
    role: Literal["user"] = "user"
    content: str | list[UserContent]
    timestamp: Number = Field(default_factory=now_ms)


class AssistantMessage(PiModel):
    role: Literal["assistant"] = "assistant"
    content: list[Content] = Field(default_factory=empty_list)
    api: str = ""
    provider: str = ""
    model: str = ""
    usage: Usage = Field(default_factory=Usage)
    stop_reason: StopReason = "stop"
    timestamp: Number = Field(default_factory=now_ms)
    response_id: str | None = None
    response_model: str | None = None
    raw_stop_reason: str | None = None
    error_message: str | None = None
    duration_ms: Number | None = None
    thinking_level: str | None = None
    provider_thinking_level: str | None = None
    diagnostics: Any = None
    deferred: Any = None
    end_turn: bool | None = None

    def text(self) -> str:
        """All text blocks joined, the answer a person reads."""
        return "".join(b.text for b in self.content if b.type == "text")

    def tool_calls(self) -> list[ToolCall]:
        return [b for b in self.content if b.type == "toolCall"]


class ToolResultMessage(PiModel):
    role: Literal["toolResult"] = "toolResult"
    tool_call_id: str
    tool_name: str
    content: list[UserContent] = Field(default_factory=empty_list)
    is_error: bool = False
    details: Any = None
    usage: Usage | None = None
    nested_calls: Any = None
    duration_ms: Number | None = None
    timestamp: Number = Field(default_factory=now_ms)


class BashExecutionMessage(PiModel):
    role: Literal["bashExecution"] = "bashExecution"
    command: str
    output: str = ""
    exit_code: int | None = None
    cancelled: bool = False
    truncated: bool = False
    full_output_path: str | None = None
    exclude_from_context: bool | None = None
    timestamp: Number = Field(default_factory=now_ms)


class CustomMessage(PiModel):
    role: Literal["custom"] = "custom"
    custom_type: str
    content: str | list[UserContent]
    display: bool = True
    details: Any = None
    timestamp: Number = Field(default_factory=now_ms)


class BranchSummaryMessage(PiModel):
    role: Literal["branchSummary"] = "branchSummary"
    summary: str
    from_id: str | None = None
    timestamp: Number = Field(default_factory=now_ms)

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        data.setdefault("fromId", None)  # pi writes an explicit null for the root
        return data


class CompactionSummaryMessage(PiModel):
    role: Literal["compactionSummary"] = "compactionSummary"
    summary: str
    tokens_before: int = 0
    timestamp: Number = Field(default_factory=now_ms)


class UnknownMessage(PiModel):
    """A role this version does not know (extensions may add roles); kept verbatim."""

    role: str
    timestamp: Number = 0


_LEGACY_ROLES = {"hookMessage": "custom"}  # v2 session files (reference §6.9)

_BY_ROLE: dict[str, type[PiModel]] = {
    "system": SystemMessage,
    "user": UserMessage,
    "assistant": AssistantMessage,
    "toolResult": ToolResultMessage,
    "bashExecution": BashExecutionMessage,
    "custom": CustomMessage,
    "branchSummary": BranchSummaryMessage,
    "compactionSummary": CompactionSummaryMessage,
}

Message = (
    SystemMessage
    | UserMessage
    | AssistantMessage
    | ToolResultMessage
    | BashExecutionMessage
    | CustomMessage
    | BranchSummaryMessage
    | CompactionSummaryMessage
    | UnknownMessage
)
"""Any message of the transcript, chosen by ``role``."""


def parse_message(data: dict[str, Any], strict: bool = False) -> Any:
    """Build the typed message for a JSON dict (legacy roles renamed, null content normalised).

    ``strict`` takes exactly the JSON types (stored sessions); otherwise numbers written as text
    and the like are converted. Raises :class:`~pi_host._record.RecordError`.
    """
    if isinstance(data, PiModel):
        return data
    if not isinstance(data, dict):
        raise RecordError(
            "Message", [{"loc": (), "type": "model_type", "msg": "Input should be an object", "input": data}]
        )
    role = data.get("role")
    if role in _LEGACY_ROLES:
        data = {**data, "role": _LEGACY_ROLES[role]}
        role = data["role"]
    if data.get("content", ...) is None:
        data = {**data, "content": "" if role in ("user", "system", "custom") else []}
    cls = _BY_ROLE.get(role, UnknownMessage) if isinstance(role, str) else UnknownMessage
    return cls.model_validate(data, strict=strict)


def parse_messages(items: list[dict[str, Any]]) -> list[Any]:
    return [parse_message(item) for item in items]


def dump_message(message: Any) -> dict[str, Any]:
    """The pi JSON form of a message (or passes a plain dict through)."""
    if isinstance(message, dict):
        return message
    return message.to_json()
