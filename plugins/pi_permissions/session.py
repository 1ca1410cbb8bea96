"""The permission state of each session, asking the user through ``ctx.ui``, and switching
modes (``/permissions <mode>``, Alt+M)."""

from __future__ import annotations

import json
import sys
import time
import weakref
from typing import Any

from pi_permissions import memory
from pi_permissions import rules as R
from pi_permissions.gate import (
    CLAUDE_MODE,
    MODES,
    Decision,
    Permissions,
    load_rules,
    mode_name,
    starting_mode,
)

HOOK_EVENT = "permissions:decision"
"""Bus event another plugin (the Claude Code / Codex hooks) emits before ``tool_call`` reaches
us: ``{"toolCallId", "decision": "allow" | "ask", "reason"}``."""
MODE_EVENT = "permissions:mode"
"""Bus event we emit when the mode is set: ``{"mode", "claudeMode"}``."""

ONCE = "Allow once"
SESSION = "Allow always for this session"
PROJECT = "Allow always for this project"
DENY = "Deny"

_states: weakref.WeakKeyDictionary[Any, Permissions] = weakref.WeakKeyDictionary()
_buses: weakref.WeakSet[Any] = weakref.WeakSet()
_tasks: set[Any] = set()


def _key(ctx: Any) -> Any:
    return getattr(ctx, "session", ctx)


def state(ctx: Any) -> Permissions | None:
    return _states.get(_key(ctx))


def _block(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    value = data.get("permissions") if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def setup(ctx: Any) -> Permissions:
    from pi_host.config.settings import project_settings_path, user_settings_path

    problems: list[str] = []
    user = _block(user_settings_path())
    project = _block(project_settings_path(ctx.cwd)) if ctx.is_project_trusted() else None
    previous = state(ctx)
    mode = (
        previous.mode
        if previous is not None
        else starting_mode(ctx.get_flag("permission-mode"), user, project, problems)
    )
    perms = Permissions(mode=mode, cwd=ctx.cwd, agent_dir=ctx.agent_dir)
    load_rules(perms, user, project, problems)
    perms.remembered = memory.session_rules(ctx) + memory.project_rules(ctx.agent_dir, ctx.cwd)
    _states[_key(ctx)] = perms
    for line in problems:
        sys.stderr.write(f"pi: {line}\n")
    _listen(ctx)
    set_mode(ctx, mode, announce=False)
    _show_when_attached(ctx)
    return perms


def _show_when_attached(ctx: Any) -> None:
    """The interactive mode attaches its UI after ``session_start`` (a host gap: a status set
    during it is lost), so the footer's mode is set again once the real UI is there."""
    import asyncio

    session = getattr(ctx, "session", None)
    if session is None or not getattr(ctx, "has_ui", False) or ctx.mode != "interactive":
        return
    first = getattr(session, "ui", None)

    async def wait() -> None:
        for _ in range(100):
            await asyncio.sleep(0.05)
            if getattr(session, "ui", None) is not first:
                perms = state(ctx)
                if perms is not None:
                    ctx.ui.set_status("permissions", None if perms.mode == "auto" else f"mode: {perms.mode}")
                return

    try:
        task = asyncio.get_running_loop().create_task(wait())
    except RuntimeError:
        return
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)


def _listen(ctx: Any) -> None:
    """Take the hooks' decisions from the bus (once per bus)."""
    bus = getattr(ctx, "events", None)
    if bus is None or bus in _buses:
        return
    _buses.add(bus)

    def on_decision(data: Any) -> None:
        perms = state(ctx)
        if perms is not None and isinstance(data, dict) and data.get("decision") in ("allow", "ask"):
            perms.hook_decisions[str(data.get("toolCallId"))] = (
                data["decision"],
                str(data.get("reason") or ""),
            )

    bus.on(HOOK_EVENT, on_decision)


def set_mode(ctx: Any, mode: str, announce: bool = True) -> None:
    perms = state(ctx) or setup(ctx)
    perms.mode = mode
    ui = getattr(ctx, "ui", None)
    if ui is not None and getattr(ctx, "has_ui", False):
        ui.set_status("permissions", None if mode == "auto" else f"mode: {mode}")
        if announce:
            ui.notify(f"permission mode: {mode}")
    bus = getattr(ctx, "events", None)
    if bus is not None:
        bus.emit(MODE_EVENT, {"mode": mode, "claudeMode": CLAUDE_MODE[mode]})


def cycle(ctx: Any) -> None:
    perms = state(ctx) or setup(ctx)
    set_mode(ctx, MODES[(MODES.index(perms.mode) + 1) % len(MODES)])


def capability(ctx: Any, name: str) -> str:
    tools = getattr(getattr(ctx, "session", None), "all_tools", None) or {}
    return str(getattr(tools.get(name), "capability", "unknown"))


def _what(tool: str, args: dict[str, Any]) -> str:
    command = args.get("command")
    if isinstance(command, str):
        text = command
    else:
        text = next((str(args[k]) for k in R.PATH_KEYS if isinstance(args.get(k), str)), "")
        text = text or json.dumps(args, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= 200 else text[:199] + "…"


async def check(event: dict[str, Any], ctx: Any) -> dict[str, Any] | None:
    """The ``tool_call`` decision: None (run it) or a block with its one-line reason."""
    perms = state(ctx)
    if perms is None or perms.idle:
        return None
    tool, args = event["toolName"], event["input"]
    decision = perms.decide(tool, args, capability(ctx, tool), str(event.get("toolCallId", "")))
    if decision.action == "allow":
        return None
    if decision.action == "ask":
        decision = await _ask(ctx, perms, tool, args, decision.reason)
    if decision.action == "deny":
        return {"block": True, "reason": f"pi-permissions: {decision.reason}"}
    return None


async def _ask(ctx: Any, perms: Permissions, tool: str, args: dict[str, Any], why: str) -> Decision:
    if not getattr(ctx, "has_ui", False):
        because = f" ({why})" if why else ""
        return Decision(
            "deny",
            f"{tool} needs approval in permission mode {perms.mode}{because} and there is no user to ask "
            f"({ctx.mode} mode); add an allow rule to the settings (permissions.allow) or use --permission-mode auto",
        )
    rule = R.suggestion(tool, args)
    title = f"Allow {tool}: {_what(tool, args)}" + (f"\n({why})" if why else "")
    options = [ONCE, f"{SESSION}: {rule.text()}", f"{PROJECT}: {rule.text()}", DENY]
    timeout = {"timeout": perms.ask_timeout} if perms.ask_timeout else {}
    asked = time.monotonic()
    answer = await ctx.ui.select(title, options, **timeout)
    if answer is None and perms.ask_timeout and time.monotonic() - asked >= perms.ask_timeout * 0.95:
        return Decision(
            "deny", f"nobody answered the question about this {tool} call within {perms.ask_timeout:g} s"
        )
    if answer is None or answer == DENY:
        return Decision("deny", f"the user denied this {tool} call")
    if answer.startswith(SESSION):
        memory.remember_for_session(ctx, rule)
        perms.remembered.append(R.Rule(rule.tool, rule.pattern, "this session"))
    elif answer.startswith(PROJECT):
        memory.remember_for_project(perms.agent_dir, perms.cwd, rule)
        perms.remembered.append(R.Rule(rule.tool, rule.pattern, "this project"))
    return Decision("allow")


async def command(args: str, ctx: Any) -> None:
    """``/permissions``: show the mode and rules; ``/permissions <mode>`` switches."""
    perms = state(ctx) or setup(ctx)
    wanted = args.strip()
    if wanted:
        mode = mode_name(wanted)
        if mode is None:
            ctx.ui.notify(f"permissions: {wanted!r} is not one of {', '.join(MODES)}", "error")
            return
        set_mode(ctx, mode)
        return
    ctx.ui.notify(perms.summary())


def section(ctx: Any) -> dict[str, str | None]:
    perms = state(ctx)
    if perms is None or perms.mode != "plan":
        return {"permissions": None}
    return {
        "permissions": (
            "Plan mode is on: only read-only tools run (read, grep, find, ls and tools that declare "
            "themselves read-only); every other call is refused. Explore, then present a concise plan "
            "of the changes; the user leaves plan mode to carry it out."
        )
    }
