"""Tool calls: before one runs and after it returned (reference §4.5, §9.3)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from pi_host.plugins.hookspecs._marker import hookspec
from pi_host.plugins.rules import Rule, expect_dict, flag, returns

__all__ = ["on_tool_call", "on_tool_result"]


if TYPE_CHECKING:  # payload types, for type checkers and readers (free at run time)

    class ToolCallEvent(TypedDict):
        toolCallId: str
        toolName: str
        input: dict[str, Any]
        """The validated arguments; changes are executed as they are, without re-validation."""

    class ToolCallDecision(TypedDict):
        block: bool
        reason: NotRequired[str]
        terminate: NotRequired[bool]


@hookspec
@returns(
    Rule(
        "the first block wins; a raise blocks",
        check=lambda event, r: expect_dict(r),
        stop=flag("block"),
        raise_blocks=True,
    )
)
def on_tool_call(event: ToolCallEvent, ctx: Any) -> ToolCallDecision | None:
    """After argument validation, before the tool runs."""


if TYPE_CHECKING:

    class ToolResultEvent(TypedDict):
        toolCallId: str
        toolName: str
        input: dict[str, Any]
        content: list[Any]
        details: Any
        structuredContent: Any
        isError: bool
        usage: Any
        terminate: bool


PATCH_KEYS = ("content", "details", "structuredContent", "isError", "usage", "terminate")


def _fold_patch(event: dict[str, Any], patch: Any) -> None:
    if "content" in patch and "structuredContent" not in patch:
        event["structuredContent"] = None  # replaced content drops the old structured content
    for key in PATCH_KEYS:
        if key in patch:
            event[key] = patch[key]


@hookspec
@returns(Rule("patches chain", check=lambda event, r: expect_dict(r), fold=_fold_patch))
def on_tool_result(event: ToolResultEvent, ctx: Any) -> dict[str, Any] | None:
    """A tool returned (error results included): return a partial patch of ``content``,
    ``details``, ``structuredContent``, ``isError``, ``usage`` or ``terminate``."""
