"""``!command`` and ``!!command`` typed in the editor: run on this machine (or by a plugin's
``user_bash`` handler), shown live, stored as pi's ``bashExecution`` message."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_host.lib.render import ToolCallView
from pi_host.lib.toolkit.local_shell import LocalShell, command_environment
from pi_host.lib.toolkit.truncate import truncate_tail
from pi_host.protocol.abort import AbortController
from pi_host.protocol.messages import BashExecutionMessage

if TYPE_CHECKING:
    from pi_mode_interactive.app import InteractiveApp


def _environment(ui: InteractiveApp) -> dict[str, str]:
    """A user's command is not the agent's: none of the session's ``PI_*`` variables."""
    settings = ui.session.config.settings if isinstance(ui.session.config.settings, dict) else {}
    keys = tuple(getattr(ui.session.tool_context, "provider_key_variables", ()) or ())
    return command_environment(settings.get("shellScrubProviderKeys") is True, keys)


async def run_user_bash(ui: InteractiveApp, text: str) -> None:
    exclude = text.startswith("!!")
    command = text[2:].strip() if exclude else text[1:].strip()
    if not command:
        return
    session = ui.session
    event = {"command": command, "excludeFromContext": exclude, "cwd": ui.cwd}
    try:
        decision = await session.host.dispatch("user_bash", event, session.ctx)
    except Exception as exc:  # a raising handler blocks the command
        ui.notice(f"!{command}: blocked ({exc})", "warning")
        return
    decision = decision if isinstance(decision, dict) else {}
    if isinstance(decision.get("result"), dict):
        found = decision["result"]
        await _record(ui, command, exclude, found.get("output", ""), found.get("exitCode"),
                      bool(found.get("cancelled")), bool(found.get("truncated")))  # fmt: skip
        return
    shell = decision.get("operations") or LocalShell()
    view = ToolCallView(id=f"user-bash-{id(event)}", name="bash", args={"command": command}, running=True)
    ui.live_tool(view)
    chunks: list[bytes] = []

    def on_data(chunk: bytes) -> None:
        chunks.append(chunk)
        view.output = b"".join(chunks[-64:]).decode("utf-8", errors="replace")
        ui.invalidate()

    controller = AbortController()
    ui.user_bash_controllers.add(controller)
    try:
        result = await shell.exec(
            command, cwd=ui.cwd, env=_environment(ui), on_data=on_data, signal=controller.signal
        )
    finally:
        ui.user_bash_controllers.discard(controller)
        ui.forget_tool(view.id)
    output = b"".join(chunks).decode("utf-8", errors="replace")
    cut = truncate_tail(output)
    cancelled = bool(getattr(result, "aborted", False))
    await _record(ui, command, exclude, cut.content, result.exit_code, cancelled, cut.truncated)


async def _record(
    ui: InteractiveApp,
    command: str,
    exclude: bool,
    output: str,
    exit_code: Any,
    cancelled: bool,
    truncated: bool,
) -> None:
    message = BashExecutionMessage(
        command=command,
        output=output,
        exit_code=exit_code if isinstance(exit_code, int) else None,
        cancelled=cancelled,
        truncated=truncated,
        exclude_from_context=True if exclude else None,
    )
    if ui.session.is_streaming:
        ui.notice(f"!{command}: recorded after the current run")
    await ui.session.add_message(message)
