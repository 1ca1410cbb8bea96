"""Running one sub-agent session for a ``subagent`` tool call."""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import Any

from pi_host import ToolError, ToolResult
from pi_host.protocol import TextContent, Usage

from . import TOOL_NAME

SYSTEM_PROMPT = """\
# Sub-agent
You are a sub-agent: another agent gave you the task in the user message and will read only your
final message. Nobody can answer questions, so do not ask any: make reasonable assumptions, do the
work with your tools, and end with a complete, concise answer (what you found or changed, with file
paths)."""

UPDATE_INTERVAL_S = 0.1
"""Streamed text is sent as a tool update at most this often."""

NESTING = (TOOL_NAME, "task")
"""Tools that start sub-agents (this one, the built-in ``task``): never given to a sub-agent."""


def _tools(parent: Any, wanted: list[str] | None) -> list[str]:
    if wanted is None:
        return [name for name in parent.get_active_tools() if name not in NESTING]
    if any(name in NESTING for name in wanted):
        raise ToolError("a sub-agent cannot start sub-agents: leave subagent out of tools")
    known = [tool["name"] for tool in parent.get_all_tools()]
    unknown = [name for name in wanted if name not in known]
    if unknown:
        available = ", ".join(name for name in known if name not in NESTING)
        raise ToolError(f"unknown tools: {', '.join(unknown)} (available: {available})")
    return list(dict.fromkeys(wanted))


class Progress:
    """Sub-session events -> ``on_update`` partial results (text so far, tools called)."""

    def __init__(self, on_update: Any, tools: list[str]) -> None:
        self.on_update = on_update
        self.tools = tools
        self.steps: list[str] = []
        self.text = ""
        self.turns = 0
        self.usage = Usage()
        self.sent: list[Any] = []
        self._last = 0.0

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        message = event.get("message")
        if kind == "message_update" and getattr(message, "role", None) == "assistant":
            self.text = message.text()
            if time.monotonic() - self._last >= UPDATE_INTERVAL_S:
                self.send()
        elif kind == "message_end" and getattr(message, "role", None) == "assistant":
            self.turns += 1
            self.text = message.text()
            self._add_usage(message.usage)
            self.send()
        elif kind == "tool_execution_start":
            self.steps.append(f"→ {event['toolName']} {_brief(event.get('args'))}")
            self.text = ""
            self.send()

    def _add_usage(self, usage: Any) -> None:
        if usage is None:
            return
        total = self.usage
        for name in ("input", "output", "cache_read", "cache_write", "total_tokens"):
            setattr(total, name, getattr(total, name) + getattr(usage, name))
        for name in ("input", "output", "cache_read", "cache_write", "total"):
            setattr(total.cost, name, getattr(total.cost, name) + getattr(usage.cost, name))

    def details(self, model: Any) -> dict[str, Any]:
        return {
            "usage": self.usage.to_json(),
            "turns": self.turns,
            "model": f"{model.provider}/{model.id}" if model is not None else None,
            "tools": self.tools,
            "steps": list(self.steps),
        }

    def send(self) -> None:
        if self.on_update is None:
            return
        self._last = time.monotonic()
        lines = [*self.steps, self.text] if self.text else self.steps or ["(sub-agent working…)"]
        result = self.on_update(ToolResult(content=[TextContent(text="\n".join(lines))]))
        if inspect.isawaitable(result):
            self.sent.append(asyncio.ensure_future(result))

    async def drain(self) -> None:
        sent, self.sent = self.sent, []
        await asyncio.gather(*sent, return_exceptions=True)


def _brief(args: Any, width: int = 80) -> str:
    text = " ".join(str(v) for v in args.values()) if isinstance(args, dict) else str(args or "")
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


async def run(
    parent: Any,
    task: str,
    tools: list[str] | None,
    signal: Any,
    on_update: Any,
    tool_call_id: str | None = None,
) -> ToolResult:
    """Run ``task`` in a sub-agent (``ctx.spawn``: a child session of the parent's); its final
    answer as the result."""
    if not task or not task.strip():
        raise ToolError("task is empty")
    names = _tools(parent, tools)
    if signal is not None and signal.aborted:
        raise ToolError("Sub-agent aborted before it started")
    progress = Progress(on_update, names)
    try:
        result = await parent.spawn(
            task,
            tools=names,
            append_system=SYSTEM_PROMPT,
            signal=signal,
            tool_call_id=tool_call_id,
            on_event=progress,
        )
    finally:
        await progress.drain()
    details = progress.details(parent.model)
    details["session"] = {"id": result.session_id, "file": result.session_file}
    if result.stop_reason == "aborted":
        raise ToolError("\n".join(["Sub-agent aborted", *progress.steps, progress.text]).strip())
    if result.error:
        raise ToolError(f"the sub-agent failed: {result.error}")
    if not result.text and result.stop_reason is None:
        raise ToolError("the sub-agent gave no answer")
    answer = result.text or "(the sub-agent gave an empty answer)"
    return ToolResult(content=[TextContent(text=answer)], details=details, usage=progress.usage)
