"""pi-subagent: a ``subagent`` tool that hands a self-contained task to a second, separate session.

The sub-agent is started with ``ctx.spawn``: a child session with the same model and plugins,
the tools the call names (by default the parent's active tools, never ``subagent`` itself), a
session file of its own linked to the parent's (none when the parent keeps none; nothing of it
is written into the parent's conversation) and its own system prompt (the usual one plus a
sub-agent section). Its final answer is the tool's result; its usage is in ``details`` and the
result's ``usage`` (and in the parent's budget). Aborting the parent aborts it, and its progress
streams as tool updates.

The work is in :mod:`pi_subagent.runner` (imported on the first call).
"""

from __future__ import annotations

from typing import Any

from pi_host import Tool, hookimpl

__version__ = "0.1.0"

TOOL_NAME = "subagent"

_contexts: dict[Any, Any] = {}
"""Session id -> the session's plugin ctx (a tool is given only a ToolContext)."""


class SubagentTool(Tool):
    name = TOOL_NAME
    label = "Subagent"
    description = (
        "Delegate a self-contained task to a sub-agent: a separate session that sees none of this "
        "conversation, works with its own tools and returns its final answer. Put everything it "
        "needs into task. tools lists the tools it may use (default: the ones you have)."
    )
    parameters = {
        "type": "object",
        "properties": {
            "task": {"type": "string", "description": "The complete task, with all needed context"},
            "tools": {
                "type": "array",
                "items": {"type": "string"},
                "description": 'Tool names for the sub-agent, e.g. ["read", "grep"]',
            },
        },
        "required": ["task"],
    }
    prompt_snippet = "delegate a self-contained task to a separate sub-agent"

    async def execute(self, tool_call_id, args, signal, on_update, ctx):
        from . import runner

        parent = _contexts.get(ctx.session_id)
        if parent is None:
            raise RuntimeError("pi-subagent: no session is open")
        return await runner.run(parent, args["task"], args.get("tools"), signal, on_update, tool_call_id)


@hookimpl
def register_tools():
    return [SubagentTool()]


@hookimpl
def on_session_start(event, ctx):
    _contexts[ctx.session.session_id] = ctx


@hookimpl
def on_session_shutdown(event, ctx):
    _contexts.pop(ctx.session.session_id, None)
