"""Built-in ``task`` tool: the model hands a self-contained task to a sub-agent (``ctx.spawn``).

Off unless enabled (``--tools +task``, or ``task`` in the ``defaultTools`` setting): a child
session with its own context does the work and its final answer is the tool's result. Several
``task`` calls in one answer run at once (tools run in parallel). The child gets the tools the
call names (default: pi's four), never ``task`` itself, so sub-agents do not nest; its budget
sits inside the parent's (``--max-cost`` holds for the whole tree) and the ``subagents``
setting may cap each child (``{"maxTurns": 20, "maxCost": 0.5}``). Escape aborts every child.
"""

from __future__ import annotations

from typing import Any

from pi_host import Tool, ToolError, ToolResult, hookimpl

TOOL_NAME = "task"

SUBAGENT_PROMPT = """\
# Sub-agent
Another agent gave you the task in the user message and reads only your final message. Nobody can
answer questions: make reasonable assumptions, do the work with your tools, and end with a
complete, concise answer (what you found or changed, with file paths)."""

_contexts: dict[str, Any] = {}
"""Session id -> its plugin ctx (a tool is handed only a ToolContext)."""


class TaskTool(Tool):
    name = TOOL_NAME
    label = "Task"
    description = (
        "Run a self-contained task in a sub-agent: a separate agent that sees none of this "
        "conversation, works with its own tools and returns its final answer. Put everything it "
        "needs into prompt. Call several at once to run them in parallel."
    )
    parameters = {
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "description": "The complete task, with all needed context"},
            "description": {"type": "string", "description": "A few words saying what the task is"},
            "tools": {
                "type": "array",
                "items": {"type": "string"},
                "description": 'Tools for the sub-agent, e.g. ["read", "grep"] (default: read, bash, edit, write)',
            },
        },
        "required": ["prompt"],
    }
    prompt_snippet = "run a self-contained task in a sub-agent (several at once run in parallel)"
    default_active = False

    async def execute(self, tool_call_id, args, signal, on_update, ctx):
        from pi_host.protocol import TextContent

        parent = _contexts.get(ctx.session_id)
        if parent is None:
            raise ToolError("task: no session is open")
        prompt = str(args.get("prompt") or "").strip()
        if not prompt:
            raise ToolError("prompt is empty")
        tools = args.get("tools")
        if tools is not None and TOOL_NAME in tools:
            raise ToolError("a sub-agent cannot start sub-agents: leave task out of tools")
        caps = (parent.settings or {}).get("subagents") or {}
        result = await parent.spawn(
            prompt,
            tools=list(tools) if tools is not None else None,
            append_system=SUBAGENT_PROMPT,
            budget=caps if isinstance(caps, dict) else None,
            signal=signal,
            tool_call_id=tool_call_id,
        )
        details = result.to_json()
        details.pop("text", None)
        if result.stop_reason == "aborted":
            raise ToolError(f"Sub-agent aborted ({result.session_id})")
        if result.error:
            raise ToolError(f"the sub-agent failed: {result.error}")
        text = result.text or "(the sub-agent gave no answer)"
        if result.stop_reason == "budget" and result.budget_stop:
            stop = result.budget_stop
            text += f"\n\n[sub-agent stopped: {stop['budget']} budget reached ({stop['spent']} of {stop['limit']})]"
        return ToolResult(content=[TextContent(text=text)], details=details)


@hookimpl
def register_tools():
    return [TaskTool()]


@hookimpl
def on_session_start(event, ctx):
    _contexts[ctx.session.session_id] = ctx


@hookimpl
def on_session_shutdown(event, ctx):
    _contexts.pop(ctx.session.session_id, None)
