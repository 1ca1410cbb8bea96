"""The interactive mode's own slash commands (reference §10.5). Plugin commands, prompt templates
and skills go through ``session.prompt`` as in every mode."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_mode_interactive.app import InteractiveApp


@dataclass
class Builtin:
    run: Callable[[InteractiveApp, str], Awaitable[None]]
    description: str


async def _quit(ui: InteractiveApp, args: str) -> None:
    ui.exit(0)


async def _hotkeys(ui: InteractiveApp, args: str) -> None:
    from pi_mode_interactive.help_text import hotkeys

    ui.notice(hotkeys(ui))


async def _compact(ui: InteractiveApp, args: str) -> None:
    if ui.session.is_streaming:
        ui.notice("Wait for the run to finish (or press escape) before compacting", "warning")
        return
    seen = ui.compactions_ended
    try:
        await ui.session.compact(args.strip() or None)
    except Exception as exc:
        if ui.compactions_ended == seen:  # else compaction_end has shown this error already
            ui.notice(compaction_error(str(exc)), "error")


def compaction_error(message: str) -> str:
    return message if message.startswith("Compaction failed") else f"Compaction failed: {message}"


async def _copy(ui: InteractiveApp, args: str) -> None:
    last = ui.session.last_assistant()
    text = last.text() if last is not None else ""
    if not text:
        ui.notice("Nothing to copy yet", "warning")
        return
    how = copy_to_clipboard(text, ui.app.output.write_raw)
    ui.app.output.flush()
    ui.notice(f"Copied the last answer ({how})")


def copy_to_clipboard(text: str, write_raw: Callable[[str], None]) -> str:
    """A clipboard tool when one exists, else OSC 52 (the terminal's own clipboard)."""
    for tool in (
        ["wl-copy"],
        ["xclip", "-selection", "clipboard"],
        ["xsel", "--clipboard", "--input"],
        ["pbcopy"],
    ):
        if shutil.which(tool[0]) and (tool[0] != "wl-copy" or os.environ.get("WAYLAND_DISPLAY")):
            if tool[0].startswith("x") and not os.environ.get("DISPLAY"):
                continue
            try:
                subprocess.run(tool, input=text.encode(), check=True, timeout=5, capture_output=True)
                return tool[0]
            except (OSError, subprocess.SubprocessError):
                continue
    payload = base64.b64encode(text.encode()).decode()
    write_raw(f"\x1b]52;c;{payload}\x07")
    return "OSC 52"


async def _name(ui: InteractiveApp, args: str) -> None:
    name = args.strip()
    if not name:
        ui.notice(f"Session name: {ui.session_name or '(none)'} — /name <name> sets it")
        return
    stored = await ui.session.set_session_name(name)
    ui.notice(f"Session named {stored!r}")


async def _session(ui: InteractiveApp, args: str) -> None:
    session = ui.session
    counts: dict[str, int] = {}
    for message in session.messages:
        role = getattr(message, "role", "?")
        counts[role] = counts.get(role, 0) + 1
    info = ui.footer_info()
    tools = sum(
        1
        for m in session.messages
        if getattr(m, "role", "") == "assistant"
        for b in m.content
        if b.type == "toolCall"
    )
    lines = [
        "Session",
        f"  file:      {session.store.session_file or '(not saved: --no-session)'}",
        f"  id:        {session.session_id}",
        f"  name:      {ui.session_name or '(none)'}",
        f"  messages:  {counts.get('user', 0)} user, {counts.get('assistant', 0)} assistant, "
        f"{tools} tool calls, {counts.get('toolResult', 0)} tool results, {len(session.messages)} total",
        f"  tokens:    {info.input_tokens} in, {info.output_tokens} out, "
        f"{info.cache_read} cache read, {info.cache_write} cache write",
        f"  cost:      ${info.cost:.4f}",
    ]
    ui.notice("\n".join(lines))


async def _new(ui: InteractiveApp, args: str) -> None:
    if await switch_session(ui, "new"):
        ui.notice("New session started")


async def switch_session(ui: InteractiveApp, reason: str, session_file: str | None = None) -> bool:
    """Replace the session by a new one (``new``) or by that file's (``resume``); False when it
    stayed (a plugin refused in ``session_before_switch``, or the switch is impossible)."""
    from pi_host.runtime.switching import SwitchError, new_session, resume_session

    try:
        if session_file:
            fresh = await resume_session(ui.request.factory, ui.session, session_file)
        else:
            fresh = await new_session(ui.request.factory, ui.session)
    except SwitchError as exc:
        ui.notice(str(exc), "error")
        return False
    if fresh is None:
        ui.notice("A plugin kept the current session", "warning")
        return False
    ui.switch_session(fresh)
    return True


async def _resume(ui: InteractiveApp, args: str) -> None:
    from pi_mode_interactive.resume import resume

    await resume(ui, args)


async def _reload(ui: InteractiveApp, args: str) -> None:
    if ui.session.is_streaming:
        ui.notice("Wait for the run to finish (or press escape) before reloading", "warning")
        return
    from pi_host.runtime.switching import SwitchError, reload_session

    try:
        fresh = await reload_session(ui.request.factory, ui.session)
    except SwitchError as exc:
        ui.notice(str(exc), "error")
        return
    ui.switch_session(fresh)
    ui.reload_keys()
    ui.parts.refresh()
    ui.notice("Reloaded plugins, settings, keybindings, context files, skills and prompt templates")


async def _model(ui: InteractiveApp, args: str) -> None:
    await ui.models.choose(args.strip())


async def _thinking(ui: InteractiveApp, args: str) -> None:
    await ui.models.thinking(args.strip())


async def _scoped_models(ui: InteractiveApp, args: str) -> None:
    await ui.models.choose_scope()


async def _tree(ui: InteractiveApp, args: str) -> None:
    from pi_mode_interactive.navigation import tree

    await tree(ui, args)


async def _fork(ui: InteractiveApp, args: str) -> None:
    from pi_mode_interactive.navigation import fork

    await fork(ui, args)


async def _clone(ui: InteractiveApp, args: str) -> None:
    from pi_mode_interactive.navigation import clone

    await clone(ui, args)


async def _import(ui: InteractiveApp, args: str) -> None:
    from pi_mode_interactive.navigation import import_session

    await import_session(ui, args)


def _settings_command(name: str) -> Callable[[InteractiveApp, str], Awaitable[None]]:
    async def run(ui: InteractiveApp, args: str) -> None:
        from pi_mode_interactive import settings_cmd

        await getattr(settings_cmd, name)(ui, args)

    return run


async def _export(ui: InteractiveApp, args: str) -> None:
    from pi_mode_interactive.export import export

    await export(ui, args)


BUILTIN: dict[str, Builtin] = {
    "quit": Builtin(_quit, "Exit pi"),
    "hotkeys": Builtin(_hotkeys, "Show the keyboard shortcuts"),
    "compact": Builtin(_compact, "Summarize the conversation so far: /compact [focus]"),
    "copy": Builtin(_copy, "Copy the last answer to the clipboard"),
    "name": Builtin(_name, "Name the session: /name <name>"),
    "session": Builtin(_session, "Show the session's file, id, messages, tokens and cost"),
    "new": Builtin(_new, "Start a new session"),
    "resume": Builtin(_resume, "Resume another session of this project"),
    "tree": Builtin(_tree, "Navigate the session tree and continue from another entry"),
    "fork": Builtin(_fork, "Start a new session from an earlier message"),
    "clone": Builtin(_clone, "Copy the current branch into a new session"),
    "export": Builtin(_export, "Save the session as HTML, or as JSONL: /export [path]"),
    "import": Builtin(_import, "Open a session file: /import <path.jsonl>"),
    "model": Builtin(_model, "Select a model: /model [provider/model]"),
    "thinking": Builtin(_thinking, "Set the thinking level: /thinking [level]"),
    "scoped-models": Builtin(_scoped_models, "Choose the models Ctrl+P cycles through"),
    "settings": Builtin(_settings_command("settings"), "Edit the common settings (saved to settings.json)"),
    "trust": Builtin(_settings_command("trust"), "Show or change whether this project's own resources load"),
    "login": Builtin(_settings_command("login"), "Store an API key for a provider: /login [provider]"),
    "logout": Builtin(_settings_command("logout"), "Remove a provider's stored key: /logout [provider]"),
    "reload": Builtin(_reload, "Reload plugins, settings, keybindings, context files, skills and templates"),
}


async def run_builtin(ui: InteractiveApp, text: str) -> bool:
    """Run ``/name args`` when it names a built-in command; False lets the session have it."""
    name, _, args = text[1:].partition(" ")
    command = BUILTIN.get(name)
    if command is None:  # built-ins come first: no plugin can take /quit away
        return False
    await command.run(ui, args)
    return True
