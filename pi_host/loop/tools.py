"""What a tool is, for the loop and for plugins that provide tools (reference §4.5, §5).

A tool plugin returns :class:`Tool` objects from its ``register_tools`` hook. The loop validates
the model's arguments against ``parameters`` (JSON Schema, with coercion), runs ``execute`` and
turns the :class:`ToolResult` (or a raised exception) into a ``toolResult`` message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pi_host.protocol.abort import AbortSignal

OnUpdate = Callable[["ToolResult"], Any]
"""Streams a partial result (``tool_execution_update``); may be sync or async."""


class ToolError(Exception):
    """Raise from ``execute`` to produce an error result whose text is the message."""


@dataclass
class ToolResult:
    content: list[Any] = field(default_factory=list)
    """Text and image blocks the model sees (``TextContent`` / ``ImageContent`` or pi JSON dicts)."""
    details: Any = None
    """Structured data for programs and renderers; persisted, never sent to the model."""
    structured_content: Any = None
    """For programmatic callers; not persisted in the session."""
    is_error: bool = False
    terminate: bool = False
    """When every result of a batch terminates, the loop makes no follow-up request."""
    usage: Any = None

    @classmethod
    def text(cls, text: str, **kwargs: Any) -> ToolResult:
        from pi_host.protocol import TextContent

        return cls(content=[TextContent(text=text)], **kwargs)


@dataclass
class ToolContext:
    """What a running tool may know about its session."""

    cwd: str
    settings: Any = None
    session_id: str | None = None
    session_file: str | None = None
    provider: str | None = None
    model: str | None = None
    thinking_level: str | None = None
    agent_dir: str | None = None
    provider_key_variables: tuple[str, ...] = ()
    """Environment variables that hold the configured providers' keys (``shellScrubProviderKeys``
    removes them from the bash tool's environment)."""
    extra: dict[str, Any] = field(default_factory=dict)


class Tool:
    """Base class for tools. Subclasses set the class attributes and implement :meth:`execute`."""

    name: str = ""
    label: str = ""
    description: str = ""
    parameters: dict[str, Any] = {"type": "object", "properties": {}}
    prompt_snippet: str | None = None
    """One line for the system prompt's tools section."""
    prompt_guidelines: list[str] = []
    """Bullets for the system prompt's rules section."""
    execution_mode: Literal["parallel", "sequential"] | None = None
    """``sequential`` forces the whole batch containing this tool to run one call at a time."""
    constrained_sampling: dict[str, Any] | None = None
    default_active: bool = True
    capability: str = "unknown"
    """What it may do, as declared: ``read``, ``write``, ``exec``, ``network`` (docs/permissions.md)."""

    def prepare_arguments(self, args: dict[str, Any]) -> dict[str, Any]:
        """Fold legacy argument shapes before validation (e.g. edit's old top-level fields)."""
        return args

    async def execute(
        self,
        tool_call_id: str,
        args: dict[str, Any],
        signal: AbortSignal,
        on_update: OnUpdate | None,
        ctx: ToolContext,
    ) -> ToolResult:
        raise NotImplementedError

    def declaration(self) -> Any:
        from pi_host.protocol import ToolDecl

        return ToolDecl(
            name=self.name,
            description=self.description,
            parameters=self.parameters,
            constrained_sampling=self.constrained_sampling,
        )
