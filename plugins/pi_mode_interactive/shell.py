"""``!command`` and ``!!command`` typed in the editor: run on this machine (or by a plugin's
``user_bash`` handler) through :func:`pi_host.runtime.user_bash.run_user_bash`, shown live,
stored as pi's ``bashExecution`` message."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_host.lib.render import ToolCallView
from pi_host.protocol.abort import AbortController
from pi_host.runtime.user_bash import UserBashBlocked
from pi_host.runtime.user_bash import run_user_bash as run_for_user

if TYPE_CHECKING:
    from pi_mode_interactive.screen_api import Screen

LIVE_TAIL_BYTES = 64 * 1024


async def run_user_bash(ui: Screen, text: str) -> None:
    exclude = text.startswith("!!")
    command = text[2:].strip() if exclude else text[1:].strip()
    if not command:
        return
    view = ToolCallView(id=f"user-bash-{id(text)}", name="bash", args={"command": command}, running=True)
    shown = bytearray()  # the live view draws the last lines: keep only the end in memory

    def on_data(chunk: bytes) -> None:
        shown.extend(chunk)
        del shown[:-LIVE_TAIL_BYTES]
        view.output = shown.decode("utf-8", errors="replace")
        ui.invalidate()

    if ui.session.is_streaming:
        ui.notice(f"!{command}: recorded after the current run")
    controller = AbortController()
    ui.user_bash_controllers.add(controller)
    ui.live_tool(view)
    spinner = not ui.working  # during a run its own line stays (and Escape stops both)
    if spinner:
        ui.set_working("Running…", hint="(escape to cancel)")
    ui.invalidate()  # `$ command` shows now, not with the first output
    try:
        await run_for_user(ui.session, command, exclude, on_data=on_data, signal=controller.signal)
    except UserBashBlocked as exc:  # a raising handler blocks the command
        ui.notice(f"!{command}: blocked ({exc})", "warning")
    finally:
        ui.user_bash_controllers.discard(controller)
        if spinner and not ui.session.is_streaming:
            ui.set_working(None)
        ui.forget_tool(view.id)
