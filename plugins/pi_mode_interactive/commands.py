"""The interactive mode's own slash commands (reference §10.5). Plugin commands, prompt templates
and skills go through ``session.prompt`` as in every mode."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from pi_mode_interactive.registry import CommandRegistry

if TYPE_CHECKING:
    from pi_mode_interactive.screen_api import Screen


async def _quit(ui: Screen, args: str) -> None:
    ui.exit(0)


async def _hotkeys(ui: Screen, args: str) -> None:
    from pi_mode_interactive.help_text import hotkeys

    ui.notice(hotkeys(ui))


async def _compact(ui: Screen, args: str) -> None:
    from pi_mode_interactive.session_events import compaction_error

    if ui.session.is_streaming:
        ui.notice("Wait for the run to finish (or press escape) before compacting", "warning")
        return
    seen = ui.compactions_ended
    try:
        await ui.session.compact(args.strip() or None)
    except Exception as exc:
        if ui.compactions_ended == seen:  # else compaction_end has shown this error already
            ui.notice(compaction_error(str(exc)), "error")


async def _copy(ui: Screen, args: str) -> None:
    from pi_mode_interactive.clipboard import copy_to_clipboard

    last = ui.session.last_assistant()
    text = last.text() if last is not None else ""
    if not text:
        ui.notice("Nothing to copy yet", "warning")
        return
    how = copy_to_clipboard(text, ui.write_raw)
    ui.notice(f"Copied the last answer ({how})")


async def _name(ui: Screen, args: str) -> None:
    name = args.strip()
    if not name:
        ui.notice(f"Session name: {ui.session_name or '(none)'} — /name <name> sets it")
        return
    stored = await ui.session.set_session_name(name)
    ui.notice(f"Session named {stored!r}")


async def _session(ui: Screen, args: str) -> None:
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


async def _new(ui: Screen, args: str) -> None:
    from pi_mode_interactive.switching import switch_session

    if await switch_session(ui, "new"):
        ui.notice("New session started")


async def _resume(ui: Screen, args: str) -> None:
    from pi_mode_interactive.resume import resume

    await resume(ui, args)


async def _reload(ui: Screen, args: str) -> None:
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


async def _model(ui: Screen, args: str) -> None:
    await ui.models.choose(args.strip())


async def _thinking(ui: Screen, args: str) -> None:
    await ui.models.thinking(args.strip())


async def _scoped_models(ui: Screen, args: str) -> None:
    await ui.models.choose_scope()


async def _tree(ui: Screen, args: str) -> None:
    from pi_mode_interactive.navigation import tree

    await tree(ui, args)


async def _fork(ui: Screen, args: str) -> None:
    from pi_mode_interactive.navigation import fork

    await fork(ui, args)


async def _clone(ui: Screen, args: str) -> None:
    from pi_mode_interactive.navigation import clone

    await clone(ui, args)


async def _import(ui: Screen, args: str) -> None:
    from pi_mode_interactive.navigation import import_session

    await import_session(ui, args)


def _settings_command(name: str) -> Callable[[Screen, str], Awaitable[None]]:
    async def run(ui: Screen, args: str) -> None:
        from pi_mode_interactive import settings_cmd

        await getattr(settings_cmd, name)(ui, args)

    return run


async def _transcript(ui: Screen, args: str) -> None:
    from pi_mode_interactive.fullview import open_view

    await open_view(ui)


async def _export(ui: Screen, args: str) -> None:
    from pi_mode_interactive.export import export

    await export(ui, args)


def builtin_registry() -> CommandRegistry:
    """The interactive mode's own commands, in the order the ``/`` menu lists them."""
    registry = CommandRegistry()
    registry.add("quit", _quit, "Exit pi")
    registry.add("hotkeys", _hotkeys, "Show the keyboard shortcuts")
    registry.add("compact", _compact, "Summarize the conversation so far: /compact [focus]")
    registry.add("copy", _copy, "Copy the last answer to the clipboard")
    registry.add("name", _name, "Name the session: /name <name>")
    registry.add("session", _session, "Show the session's file, id, messages, tokens and cost")
    registry.add("new", _new, "Start a new session")
    registry.add("resume", _resume, "Resume another session of this project")
    registry.add("tree", _tree, "Navigate the session tree and continue from another entry")
    registry.add("fork", _fork, "Start a new session from an earlier message")
    registry.add("clone", _clone, "Copy the current branch into a new session")
    registry.add("export", _export, "Save the session as HTML, or as JSONL: /export [path]")
    registry.add("import", _import, "Open a session file: /import <path.jsonl>")
    registry.add("model", _model, "Select a model: /model [provider/model]")
    registry.add("thinking", _thinking, "Set the thinking level: /thinking [level]")
    registry.add("scoped-models", _scoped_models, "Choose the models Ctrl+P cycles through")
    registry.add(
        "settings", _settings_command("settings"), "Edit the common settings (saved to settings.json)"
    )
    registry.add(
        "trust", _settings_command("trust"), "Show or change whether this project's own resources load"
    )
    registry.add("login", _settings_command("login"), "Store an API key for a provider: /login [provider]")
    registry.add("logout", _settings_command("logout"), "Remove a provider's stored key: /logout [provider]")
    registry.add("transcript", _transcript, "The whole session on one screen: scroll, search, expand (alt+o)")
    registry.add(
        "reload", _reload, "Reload plugins, settings, keybindings, context files, skills and templates"
    )
    return registry


BUILTIN = builtin_registry()
"""The built-ins as shipped (each application makes its own registry: features may add to it)."""
