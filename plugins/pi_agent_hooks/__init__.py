"""pi-agent-hooks: the hook files of Claude Code and Codex, run unchanged (docs/permissions.md).

Off by default: ``"agentHooks": {"enabled": true}`` in settings, or ``--agent-hooks`` for a run.
Then the hooks of ``~/.claude/settings.json`` and ``~/.codex/hooks.json`` (and, in a project the
user trusted, ``.claude/settings.json``, ``.claude/settings.local.json``, ``.codex/hooks.json``) run
on pi-host's events: ``PreToolUse`` on ``tool_call`` (before every other plugin: it may block or
rewrite the input), ``PostToolUse`` on ``tool_result``, ``UserPromptSubmit`` on ``input``,
``Stop`` on ``agent_before_settle``, ``SessionStart`` / ``SessionEnd``, ``PreCompact`` /
``PostCompact``, ``Notification`` when pi-host shows a dialog.
"""

from __future__ import annotations

import os
from typing import Any

from pi_host import hookimpl

__version__ = "0.1.0"


def _on(ctx: Any) -> bool:
    if ctx.get_flag("agent-hooks"):
        return True
    settings = ctx.settings if isinstance(ctx.settings, dict) else {}
    value = settings.get("agentHooks")
    return value is True or (isinstance(value, dict) and value.get("enabled") is True)


def _events() -> Any:
    from pi_agent_hooks import events

    return events


@hookimpl
def register_cli_flags() -> list[Any]:
    from pi_host import CliFlag

    return [
        CliFlag(name="agent-hooks", description="Run Claude Code and Codex hook files (docs/permissions.md)")
    ]


@hookimpl
async def on_session_start(event: dict[str, Any], ctx: Any) -> None:
    if _on(ctx):
        await _events().session_start(event, ctx, os.path.expanduser("~"))


@hookimpl(tryfirst=True)
async def on_tool_call(event: dict[str, Any], ctx: Any) -> dict[str, Any] | None:
    return await _events().pre_tool_use(event, ctx) if _on(ctx) else None


@hookimpl(tryfirst=True)
async def on_tool_result(event: dict[str, Any], ctx: Any) -> dict[str, Any] | None:
    return await _events().post_tool_use(event, ctx) if _on(ctx) else None


@hookimpl
async def on_input(event: dict[str, Any], ctx: Any) -> dict[str, Any] | None:
    return await _events().user_prompt_submit(event, ctx) if _on(ctx) else None


@hookimpl
def on_before_agent_start(event: dict[str, Any], ctx: Any) -> dict[str, Any] | None:
    return _events().take_context(ctx) if _on(ctx) else None


@hookimpl
async def on_agent_before_settle(event: dict[str, Any], ctx: Any) -> dict[str, Any] | None:
    return await _events().stop(event, ctx) if _on(ctx) else None


@hookimpl
async def on_session_before_compact(event: dict[str, Any], ctx: Any) -> None:
    if _on(ctx):
        trigger = "manual" if event.get("reason") == "manual" else "auto"
        await _events().simple(
            ctx,
            "PreCompact",
            trigger,
            trigger=trigger,
            custom_instructions=event.get("customInstructions") or "",
        )


@hookimpl
async def on_session_compact(event: dict[str, Any], ctx: Any) -> None:
    if _on(ctx):
        trigger = "manual" if event.get("reason") == "manual" else "auto"
        await _events().simple(ctx, "PostCompact", trigger, trigger=trigger)


@hookimpl
async def on_session_shutdown(event: dict[str, Any], ctx: Any) -> None:
    if _on(ctx):
        reason = {"quit": "prompt_input_exit"}.get(str(event.get("reason")), "other")
        await _events().simple(ctx, "SessionEnd", reason, reason=reason)


@hookimpl
async def on_ui_prompt_start(event: dict[str, Any], ctx: Any) -> None:
    if _on(ctx):
        title = str(event.get("title") or "")
        await _events().simple(
            ctx,
            "Notification",
            "",
            message=f"pi needs your input: {title}",
            title="pi",
            notification_type="elicitation_dialog",
        )
