"""An extension's ``pi.registerTool`` tool as a pi-host :class:`~pi_host.Tool`: the model sees its
name, description and JSON Schema (TypeBox builds JSON Schema; pi-host validates it as pi does),
and ``execute`` runs in the bridge, streaming ``onUpdate`` partial results and stopping on abort."""

from __future__ import annotations

import inspect
from typing import Any

from pi_host import Tool, ToolResult
from pi_host.loop.tools import ToolError
from pi_ts_bridge.extension import Extension


def _result(value: Any) -> ToolResult:
    value = value if isinstance(value, dict) else {}
    return ToolResult(
        content=list(value.get("content") or []),
        details=value.get("details"),
        structured_content=value.get("structuredContent"),
        is_error=bool(value.get("isError")),
        terminate=bool(value.get("terminate")),
        usage=value.get("usage"),
    )


class ScriptTool(Tool):
    def __init__(self, extension: Extension, info: dict[str, Any]) -> None:
        self.extension = extension
        self.name = info["name"]
        self.label = info.get("label") or self.name
        self.description = info.get("description") or ""
        self.parameters = info.get("parameters") or {"type": "object", "properties": {}}
        self.prompt_snippet = info.get("promptSnippet")
        self.prompt_guidelines = list(info.get("promptGuidelines") or [])
        self.execution_mode = info.get("executionMode")
        self.default_active = bool(info.get("defaultActive", True))

    async def execute(
        self, tool_call_id: str, args: dict[str, Any], signal: Any, on_update: Any, ctx: Any
    ) -> ToolResult:
        runtime = self.extension.runtime

        async def update(partial: Any) -> None:
            if on_update is not None:
                outcome = on_update(_result(partial))
                if inspect.isawaitable(outcome):
                    await outcome

        frame = {"t": "tool", "name": self.name, "call": tool_call_id, "args": args}
        if signal is not None:
            frame["sig"] = runtime.signal_id(signal)
        try:
            value = await runtime.request(self.extension, frame, update)
        except RuntimeError as exc:  # the tool threw: an error result with its message, as in pi
            raise ToolError(str(exc)) from None
        if value is None and self.extension.dead_reported:
            raise ToolError(
                f"extension {self.extension.name!r} is not running (its TypeScript bridge stopped)"
            )
        return _result(value)
