"""pi-host's agent library: a stateful agent over the kernel's loop (pi's ``pi-agent-core``).

    import asyncio
    from pi_host.agent import Agent, define_tool
    from pi_host.ai import get_model

    def add(call_id, params, signal, on_update):
        return str(params["a"] + params["b"])

    async def main():
        agent = Agent(get_model("anthropic", "claude-sonnet-4-5"), system_prompt="Be brief.",
                      tools=[define_tool("add", "Add two numbers",
                                         {"type": "object", "properties": {"a": {"type": "number"},
                                          "b": {"type": "number"}}, "required": ["a", "b"]}, add)])
        agent.subscribe(lambda e: print(e["assistantMessageEvent"].delta, end="")
                        if e["type"] == "message_update"
                        and e["assistantMessageEvent"].type == "text_delta" else None)
        await agent.prompt("What is 2 + 3?")

    asyncio.run(main())

:class:`Agent` keeps the transcript, the model, the tools and the queued input; ``prompt``,
``continue_``, ``steer``, ``follow_up``, ``abort``, ``wait_for_idle`` and ``subscribe`` drive it.
Events are dicts with pi's names (``agent_start``, ``turn_start``, ``message_start`` /
``message_update`` / ``message_end``, ``tool_execution_*``, ``turn_end``, ``agent_end``). No
files, coding tools, plugins or trust are involved; the coding agent's session is built on it.
The low-level loop is :class:`AgentLoop` with a :class:`LoopConfig`. docs/layers.md has more.
"""

from __future__ import annotations

from pi_host._exports import lazy_exports

_EXPORTS = {
    "Agent": "pi_host.agent.agent",
    "AgentBusyError": "pi_host.agent.agent",
    "AgentState": "pi_host.agent.agent",
    "BudgetExceeded": "pi_host.agent.agent",
    "Budget": "pi_host.agent.budget",
    "Limits": "pi_host.agent.budget",
    "Listener": "pi_host.agent.agent",
    "FunctionTool": "pi_host.agent.tools",
    "define_tool": "pi_host.agent.tools",
    "JsonlStore": "pi_host.agent.store",
    "MessageStore": "pi_host.agent.store",
    "Tool": "pi_host.loop.tools",
    "ToolContext": "pi_host.loop.tools",
    "ToolError": "pi_host.loop.tools",
    "ToolResult": "pi_host.loop.tools",
    "AgentLoop": "pi_host.loop.loop",
    "LoopConfig": "pi_host.loop.loop",
    "convert_to_llm": "pi_host.loop.convert",
    "CustomMessage": "pi_host.protocol.messages",
    "PiModel": "pi_host.protocol.messages",
    "Field": "pi_host._record",
    "now_ms": "pi_host.protocol.messages",
    "UserMessage": "pi_host.protocol.messages",
    "AbortSignal": "pi_host.protocol.abort",
}

__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports("pi_host.agent", _EXPORTS)
