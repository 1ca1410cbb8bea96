"""Tools from plain functions: :func:`define_tool` (pi's ``AgentTool`` object literal).

A tool is a :class:`pi_host.loop.tools.Tool`; subclass it for full control, or describe one here
with a name, a description, parameters (JSON Schema or a pydantic model) and a function.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any, Literal

from pi_host.loop.tools import OnUpdate, Tool, ToolContext, ToolResult
from pi_host.protocol.abort import AbortSignal

__all__ = ["FunctionTool", "define_tool"]


class FunctionTool(Tool):
    """A tool whose ``execute`` is a function ``(tool_call_id, params, signal, on_update)``.

    With a pydantic model as ``parameters`` the function receives the model instance (its own
    validation runs after the loop's JSON Schema check and coercion). The function may be sync
    or async and return a :class:`ToolResult`, a string (one text block) or any JSON value.
    Raise to report an error to the model.
    """

    def __init__(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any] | type | None,
        function: Callable[..., Any],
        *,
        label: str = "",
        execution_mode: Literal["parallel", "sequential"] | None = None,
    ) -> None:
        from pi_host.ai.context import parameters_schema

        self.name = name
        self.label = label or name
        self.description = description
        self.parameters = parameters_schema(parameters)
        self.execution_mode = execution_mode
        self._model = None if parameters is None or isinstance(parameters, dict) else parameters
        self._function = function

    async def execute(
        self,
        tool_call_id: str,
        args: dict[str, Any],
        signal: AbortSignal,
        on_update: OnUpdate | None,
        ctx: ToolContext,
    ) -> ToolResult:
        params: Any = self._model.model_validate(args) if self._model is not None else args
        result = self._function(tool_call_id, params, signal, on_update)
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, ToolResult):
            return result
        if isinstance(result, str):
            return ToolResult.text(result)
        return ToolResult.text(json.dumps(result, ensure_ascii=False, default=str), details=result)


def define_tool(
    name: str,
    description: str,
    parameters: dict[str, Any] | type | None,
    execute: Callable[..., Any],
    *,
    label: str = "",
    execution_mode: Literal["parallel", "sequential"] | None = None,
) -> FunctionTool:
    """A tool for an :class:`~pi_host.agent.Agent` (see :class:`FunctionTool`)."""
    return FunctionTool(name, description, parameters, execute, label=label, execution_mode=execution_mode)
