"""Running one sub-agent session for a ``subagent`` tool call."""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import Any

import pi_host
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

_sub_sessions: dict[int, str] = {}
"""id(session) of running sub-agents -> their system prompt addition."""


def system_prompt_addition(ctx: Any) -> str | None:
    return _sub_sessions.get(id(ctx.session))


def _tools(parent: Any, wanted: list[str] | None) -> list[str]:
    if wanted is None:
        return [name for name in parent.get_active_tools() if name != TOOL_NAME]
    if TOOL_NAME in wanted:
        raise ToolError("a sub-agent cannot start sub-agents: leave subagent out of tools")
    known = [tool["name"] for tool in parent.get_all_tools()]
    unknown = [name for name in wanted if name not in known]
    if unknown:
        available = ", ".join(name for name in known if name != TOOL_NAME)
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


async def run(parent: Any, task: str, tools: list[str] | None, signal: Any, on_update: Any) -> ToolResult:
    """Run ``task`` in a new session; its final answer as the result."""
    if not task or not task.strip():
        raise ToolError("task is empty")
    names = _tools(parent, tools)
    if signal is not None and signal.aborted:
        raise ToolError("Sub-agent aborted before it started")
    session = parent.session
    options = pi_host.SessionOptions(
        cwd=parent.cwd,
        model=parent.model,
        thinking_level=parent.thinking_level,
        tools=names,
        host=session.host,  # the plugins already loaded (and the trust already decided)
        project_trusted=parent.is_project_trusted(),
        registry=session.registry,  # the same models and keys
        settings=parent.settings,
        store_options={"no_session": True},  # in memory: nothing reaches the parent's file
        mode="subagent",
        has_ui=False,
    )
    progress = Progress(on_update, names)
    sub = await pi_host.create_session(options)
    _sub_sessions[id(sub)] = SYSTEM_PROMPT
    unsubscribe = sub.subscribe(progress)
    remove = signal.add_listener(sub.request_abort) if signal is not None else None
    try:
        await sub.prompt(task, source="extension", expand=False)
    finally:
        if remove is not None:
            remove()
        unsubscribe()
        await progress.drain()
        _sub_sessions.pop(id(sub), None)
        await sub.close()
    final = sub.last_assistant()
    details = progress.details(sub.model)
    if signal is not None and signal.aborted:
        raise ToolError("\n".join(["Sub-agent aborted", *progress.steps, progress.text]).strip())
    if final is None:
        raise ToolError("the sub-agent gave no answer")
    if final.stop_reason == "error":
        raise ToolError(f"the sub-agent failed: {final.error_message or 'unknown error'}")
    answer = final.text().strip() or "(the sub-agent gave an empty answer)"
    return ToolResult(content=[TextContent(text=answer)], details=details, usage=progress.usage)
