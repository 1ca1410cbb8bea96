"""Claude Code / Codex hook events on pi-host's hooks (the table is in docs/permissions.md).

What a hook answers, as in Claude Code: exit 0 is success (stdout may be a JSON object), exit 2
blocks where the event can block (its stderr is the reason), any other exit code or a timeout is
a failure reported in one line that blocks nothing. JSON answers: ``continue: false`` (with
``stopReason``), ``systemMessage`` (shown to the user), ``decision: "block"`` + ``reason``, and
``hookSpecificOutput`` (``permissionDecision`` / ``permissionDecisionReason`` / ``updatedInput``
for PreToolUse, ``additionalContext`` for UserPromptSubmit, SessionStart and PostToolUse).
"""

from __future__ import annotations

import sys
import weakref
from dataclasses import dataclass, field
from typing import Any

from pi_agent_hooks import mapping
from pi_agent_hooks.config import HookConfig, load
from pi_agent_hooks.runner import Outcome, run_all

CONTEXT_TYPE = "agent-hooks"
PERMISSION_EVENT = "permissions:decision"
MODE_EVENT = "permissions:mode"
SOURCES = {"startup": "startup", "reload": "startup", "new": "clear", "resume": "resume", "fork": "resume"}


@dataclass
class HookSession:
    config: HookConfig
    cwd: str
    context: list[str] = field(default_factory=list)
    """Text hooks asked to add, sent with the next prompt (a custom message the model sees)."""
    permission_mode: str = "bypassPermissions"
    stop_active: bool = False


_sessions: weakref.WeakKeyDictionary[Any, HookSession] = weakref.WeakKeyDictionary()
_buses: weakref.WeakSet[Any] = weakref.WeakSet()


def _key(ctx: Any) -> Any:
    return getattr(ctx, "session", ctx)


def current(ctx: Any) -> HookSession | None:
    return _sessions.get(_key(ctx))


def say(ctx: Any, line: str, kind: str = "warning") -> None:
    ui = getattr(ctx, "ui", None)
    if getattr(ctx, "has_ui", False) and ui is not None:
        ui.notify(line, kind)
    if getattr(ctx, "mode", "") != "interactive":
        sys.stderr.write(f"pi: {line}\n")
        sys.stderr.flush()


def _payload(ctx: Any, hooks: HookSession, event: str, **fields: Any) -> dict[str, Any]:
    model = getattr(ctx, "model", None)
    return {
        "session_id": ctx.session_id,
        "transcript_path": ctx.session_file,
        "cwd": ctx.cwd,
        "hook_event_name": event,
        "permission_mode": hooks.permission_mode,
        "model": getattr(model, "id", None),
        **fields,
    }


async def _run(
    ctx: Any, hooks: HookSession, event: str, candidates: list[str], **fields: Any
) -> list[Outcome]:
    matching = hooks.config.matching(event, candidates)
    if not matching:
        return []
    outcomes = await run_all(matching, _payload(ctx, hooks, event, **fields), hooks.cwd)
    for outcome in outcomes:
        line = outcome.failure()
        if line:
            say(ctx, line)
        message = (outcome.json or {}).get("systemMessage")
        if isinstance(message, str) and message:
            say(ctx, message, "info")
    return outcomes


def _specific(outcome: Outcome) -> dict[str, Any]:
    value = (outcome.json or {}).get("hookSpecificOutput")
    return value if isinstance(value, dict) else {}


def _context(outcomes: list[Outcome], plain: bool) -> list[str]:
    found = [str(_specific(o).get("additionalContext") or "") for o in outcomes]
    if plain:
        found += [o.plain for o in outcomes]
    return [text for text in found if text.strip()]


def _blocks(outcomes: list[Outcome]) -> list[str]:
    """Reasons of the hooks that block (exit 2, ``decision: "block"``)."""
    reasons = []
    for outcome in outcomes:
        data = outcome.json or {}
        if outcome.code == 2:
            reasons.append(outcome.stderr.strip() or "blocked by a hook")
        elif data.get("decision") == "block":
            reasons.append(str(data.get("reason") or "blocked by a hook"))
    return reasons


def _stopped(outcomes: list[Outcome]) -> str | None:
    for outcome in outcomes:
        data = outcome.json or {}
        if data.get("continue") is False:
            return str(data.get("stopReason") or "stopped by a hook")
    return None


async def session_start(event: dict[str, Any], ctx: Any, home: str) -> None:
    config = load(ctx, home)
    for line in config.problems:
        say(ctx, line)
    hooks = HookSession(config, ctx.cwd)
    previous = current(ctx)
    if previous is not None:
        hooks.permission_mode = previous.permission_mode
    _sessions[_key(ctx)] = hooks
    _listen(ctx)
    source = SOURCES.get(str(event.get("reason")), "startup")
    outcomes = await _run(ctx, hooks, "SessionStart", [source], source=source)
    hooks.context += _context(outcomes, plain=True)


def _listen(ctx: Any) -> None:
    bus = getattr(ctx, "events", None)
    if bus is None or bus in _buses:
        return
    _buses.add(bus)

    def on_mode(data: Any) -> None:
        hooks = current(ctx)
        if hooks is not None and isinstance(data, dict) and isinstance(data.get("claudeMode"), str):
            hooks.permission_mode = data["claudeMode"]

    bus.on(MODE_EVENT, on_mode)


async def pre_tool_use(event: dict[str, Any], ctx: Any) -> dict[str, Any] | None:
    hooks = current(ctx)
    tool, args = event["toolName"], event["input"]
    if hooks is None or not hooks.config.matching("PreToolUse", mapping.names(tool, args)):
        return None
    outcomes = await _run(
        ctx,
        hooks,
        "PreToolUse",
        mapping.names(tool, args),
        tool_name=mapping.claude_name(tool, args),
        tool_input=mapping.to_claude(tool, args, ctx.cwd),
        tool_use_id=event.get("toolCallId"),
    )
    stopped = _stopped(outcomes)
    denied = _blocks(outcomes)
    decision, reasons = "", []
    for outcome in outcomes:
        specific = _specific(outcome)
        data = outcome.json or {}
        said = specific.get("permissionDecision") or {"approve": "allow"}.get(str(data.get("decision")))
        reason = str(specific.get("permissionDecisionReason") or data.get("reason") or "")
        if said == "deny":
            denied.append(reason or "denied by a hook")
        elif said in ("ask", "allow") and decision != "ask":
            decision, reasons = said, [reason] if reason else []
        updated = specific.get("updatedInput")
        if isinstance(updated, dict):
            new = mapping.from_claude(tool, updated, args)
            args.clear()
            args.update(new)  # the loop runs the dict it gave us: changed in place
    hooks.context += _context(outcomes, plain=False)
    if stopped is not None or denied:
        why = "; ".join(denied) if denied else stopped
        return {
            "block": True,
            "reason": f"blocked by a PreToolUse hook: {why}",
            "terminate": stopped is not None,
        }
    if decision:
        bus = getattr(ctx, "events", None)
        if bus is not None:
            bus.emit(
                PERMISSION_EVENT,
                {"toolCallId": event.get("toolCallId"), "decision": decision, "reason": "; ".join(reasons)},
            )
    return None


async def post_tool_use(event: dict[str, Any], ctx: Any) -> dict[str, Any] | None:
    hooks = current(ctx)
    tool, args = event["toolName"], event["input"]
    name = "PostToolUseFailure" if event.get("isError") else "PostToolUse"
    if hooks is None or not hooks.config.matching(name, mapping.names(tool, args)):
        return None
    content = list(event.get("content") or [])
    text = "".join(
        b.get("text", "") if isinstance(b, dict) else getattr(b, "text", "") or "" for b in content
    )
    fields: dict[str, Any] = {
        "tool_name": mapping.claude_name(tool, args),
        "tool_input": mapping.to_claude(tool, args, ctx.cwd),
        "tool_use_id": event.get("toolCallId"),
    }
    if name == "PostToolUse":
        fields["tool_response"] = mapping.tool_response(tool, args, text, False, ctx.cwd)
    else:
        fields["error"] = text
    outcomes = await _run(ctx, hooks, name, mapping.names(tool, args), **fields)
    patch: dict[str, Any] = {}
    for outcome in outcomes:
        replaced = _specific(outcome).get("updatedMCPToolOutput")
        if replaced is not None and tool.startswith("mcp__"):
            content = [{"type": "text", "text": replaced if isinstance(replaced, str) else str(replaced)}]
            patch["content"] = content
    feedback = _blocks(outcomes) + _context(outcomes, plain=False)
    if feedback:
        patch["content"] = [*content, {"type": "text", "text": f"\n\n[{name} hook] " + "\n".join(feedback)}]
    if _stopped(outcomes) is not None:
        patch["terminate"] = True
    return patch or None


async def user_prompt_submit(event: dict[str, Any], ctx: Any) -> dict[str, Any] | None:
    hooks = current(ctx)
    if hooks is None or event.get("source") == "extension":
        return None
    hooks.stop_active = False
    outcomes = await _run(ctx, hooks, "UserPromptSubmit", [""], prompt=event.get("text", ""))
    refused = _blocks(outcomes) or ([_stopped(outcomes)] if _stopped(outcomes) else [])
    if refused:
        say(ctx, f"prompt blocked by a UserPromptSubmit hook: {'; '.join(str(r) for r in refused)}")
        return {"action": "handled"}
    hooks.context += _context(outcomes, plain=True)
    return None


def take_context(ctx: Any) -> dict[str, Any] | None:
    hooks = current(ctx)
    if hooks is None or not hooks.context:
        return None
    text, hooks.context = "\n\n".join(hooks.context), []
    return {"message": {"customType": CONTEXT_TYPE, "content": text, "display": False}}


async def stop(event: dict[str, Any], ctx: Any) -> dict[str, Any] | None:
    hooks = current(ctx)
    if hooks is None or not hooks.config.matching("Stop", [""]):
        return None
    last = ""
    context = event.get("context") or {}  # pi's BoundaryContextPreview
    for message in reversed(context.get("contextMessages") or []):
        if getattr(message, "role", None) == "assistant":
            last = message.text() if hasattr(message, "text") else ""
            break
    outcomes = await _run(
        ctx, hooks, "Stop", [""], stop_hook_active=hooks.stop_active, last_assistant_message=last
    )
    reasons = _blocks(outcomes)
    if not reasons or _stopped(outcomes) is not None or hooks.stop_active:
        return None
    hooks.stop_active = True
    entry = {
        "type": "custom_message",
        "customType": "agent-hooks-stop",
        "content": "\n".join(reasons),
        "display": True,
    }
    return {"entries": [*event.get("entries", []), entry], "continue": True}


async def simple(ctx: Any, name: str, matcher: str, **fields: Any) -> None:
    """Events whose answer changes nothing here (failures and ``systemMessage`` are shown)."""
    hooks = current(ctx)
    if hooks is not None:
        await _run(ctx, hooks, name, [matcher], **fields)
