"""``ctx.spawn``: a sub-agent as a child session of the running one.

The child is a session of its own (its own context: it sees only its prompt), built on the
parent's plugins, catalog, keys, settings and cwd, and written to a session file of its own next
to the parent's (``parentSession`` in its header names the parent's file; nothing is written when
the parent keeps no file). Its budget sits inside the parent's, so its turns, tokens and cost
count in the parent's totals and limits (the whole tree's), and its own limits (``max_turns``,
``budget``) stop it alone. Aborting the parent's signal aborts it. Its events reach the parent's
listeners (the JSON stream, RPC) wrapped as ``subagent_event`` with the child's id, between a
``subagent_start`` and a ``subagent_end``; the parent's file gets a ``custom`` entry
``subagent`` with the child's file and result.

Several spawns run concurrently: each child is a separate session with its own agent.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from pi_host.agent.budget import Limits

ENTRY_TYPE = "subagent"


@dataclass
class SubagentResult:
    """What a child session ended with."""

    text: str
    session_id: str
    session_file: str | None
    stop_reason: str | None
    """The final answer's: ``stop``, ``error``, ``aborted``...; ``budget`` when a budget stopped it."""
    error: str | None = None
    turns: int = 0
    usage: dict[str, Any] = field(default_factory=dict)
    budget_stop: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        data = {
            "sessionId": self.session_id,
            "sessionFile": self.session_file,
            "stopReason": self.stop_reason,
            "text": self.text,
            "turns": self.turns,
            "usage": self.usage,
        }
        if self.error:
            data["error"] = self.error
        if self.budget_stop:
            data["budget"] = self.budget_stop
        return data


def as_limits(max_turns: int | None, budget: Any) -> Limits:
    """``budget`` as a Limits, a dict (``turns``/``maxTurns``, ``cost``/``maxCost``...) or None."""
    if isinstance(budget, Limits):
        limits = budget
    elif isinstance(budget, dict):
        names = {"maxTurns": "turns", "maxCost": "cost", "maxTokens": "tokens", "maxTime": "time_s"}
        limits = Limits(**{names.get(k, k): v for k, v in budget.items() if names.get(k, k) != "time"})
        if "time" in budget or "maxTime" in budget:
            from pi_host.agent.budget import parse_duration

            limits.time_s = parse_duration(budget.get("time", budget.get("maxTime")))
    else:
        limits = Limits()
    if max_turns is not None:
        limits = Limits(turns=max_turns, cost=limits.cost, tokens=limits.tokens, time_s=limits.time_s)
    return limits


def _child_store(parent: Any) -> Any:
    """A store of the parent's kind for the child (its class's ``create``, as a fork makes one):
    a new file beside the parent's, linked by ``parentSession``; memory when the parent keeps no
    file or its store cannot make another."""
    from pi_host.lib.sessions.store import MemoryStore

    parent_file = getattr(parent.store, "session_file", None)
    create = getattr(type(parent.store), "create", None)
    if not parent_file or create is None:
        return MemoryStore(parent.config.cwd), None
    try:
        store = create(parent.config.cwd, os.path.dirname(parent_file), parent_session=parent_file)
    except TypeError:  # a store whose create() takes other arguments
        return MemoryStore(parent.config.cwd), None
    return store, parent_file


async def spawn(
    ctx: Any,
    prompt: str,
    *,
    tools: list[str] | None = None,
    model: Any = None,
    system: str | None = None,
    append_system: str | None = None,
    max_turns: int | None = None,
    budget: Any = None,
    signal: Any = None,
    tool_call_id: str | None = None,
    on_event: Any = None,
) -> SubagentResult:
    """Run ``prompt`` in a child session of ``ctx``'s session; its final answer and what it cost."""
    from pi_host.lib.wire import event_json
    from pi_host.runtime.budgets import attach_budget
    from pi_host.runtime.extension_api.subsession import create_subsession

    parent = ctx.session
    store, parent_file = _child_store(parent)
    child = await create_subsession(
        ctx, model=model, tools=tools, system_prompt=system, append_system_prompt=append_system, store=store
    )
    child_budget = attach_budget(child, as_limits(max_turns, budget), parent.agent.budget, "subagent")
    child_id = child.session_id
    tag = {"subagentId": child_id, "parentSessionId": parent.session_id}
    if tool_call_id:
        tag["toolCallId"] = tool_call_id

    def forward(event: dict[str, Any]) -> None:
        if on_event is not None:
            on_event(event)
        parent.notify({"type": "subagent_event", **tag, "event": event_json(event)})

    parent.notify({"type": "subagent_start", **tag, "sessionFile": getattr(store, "session_file", None)})
    unsubscribe = child.subscribe(forward)
    signal = signal if signal is not None else parent.signal
    remove = signal.add_listener(child.request_abort) if signal is not None else None
    error: str | None = None
    try:
        if signal is not None and signal.aborted:
            child.request_abort()
            error = "aborted before it started"
        else:
            await child.prompt(prompt, source="extension", expand=False)
    except Exception as exc:  # the child's failure is its result, not the parent's crash
        error = f"{type(exc).__name__}: {exc}"
    finally:
        if remove is not None:
            remove()
        unsubscribe()
        await child.close()
    result = _result(child, child_budget, error, signal)
    parent.notify({"type": "subagent_end", **tag, "result": result.to_json()})
    record = {k: v for k, v in result.to_json().items() if k != "text"}
    record.update(prompt=prompt, result=result.text)
    if parent_file is not None or getattr(parent.store, "entries", None) is not None:
        parent.store.append({"type": "custom", "customType": ENTRY_TYPE, "data": record})
    return result


def _result(child: Any, budget: Any, error: str | None, signal: Any) -> SubagentResult:
    final = child.last_assistant()
    stop = final.stop_reason if final is not None else None
    stopped = child.agent.budget_stop
    if stopped is not None:
        stop = "budget"
    if signal is not None and signal.aborted:
        stop = "aborted"
    if final is not None and final.stop_reason == "error" and not error:
        error = final.error_message or "the model's request failed"
    usage = {"turns": budget.turns, "tokens": budget.tokens, "cost": round(budget.cost, 10)}
    return SubagentResult(
        text=final.text().strip() if final is not None else "",
        session_id=child.session_id,
        session_file=getattr(child.store, "session_file", None),
        stop_reason=stop,
        error=error,
        turns=budget.turns,
        usage=usage,
        budget_stop=stopped,
    )
