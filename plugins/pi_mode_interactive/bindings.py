"""The application's keys, by pi's action ids (remappable in ``<agent dir>/keybindings.json``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prompt_toolkit.filters import Condition, has_completions, is_searching
from prompt_toolkit.key_binding import KeyBindings

from pi_mode_interactive import completion_menu, fullview, key_actions
from pi_mode_interactive.editor.keys import bindings_for, load_keybindings, register_extra_sequences
from pi_mode_interactive.editor.paste import bind_paste
from pi_mode_interactive.slash import enter_on_menu

App = Any
"""The :class:`~pi_mode_interactive.app.InteractiveApp` this part of it is built for: named, not
imported (the application imports this module)."""


def _actions(ui: App) -> dict[str, Callable[[Any], Any]]:
    def newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    def submit(event: Any) -> None:
        buffer = event.current_buffer
        chosen = enter_on_menu(buffer)
        if chosen == "insert":  # a file or an argument: the line goes on
            return
        if chosen == "run":  # a command: pi runs the highlighted match
            ui.submit()
            return
        document = buffer.document
        if document.is_cursor_at_the_end and document.text.endswith("\\"):  # `\` + Enter: a new line
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
            return
        ui.submit()

    return {
        "tui.input.submit": submit,
        "tui.input.newLine": newline,
        "app.message.followUp": lambda event: ui.submit(follow_up=True),
        "app.message.dequeue": lambda event: ui.restore_queue(),
        "app.interrupt": lambda event: key_actions.abort(ui),
        "app.clear": lambda event: key_actions.ctrl_c(ui),
        "app.exit": lambda event: key_actions.ctrl_d(ui),
        "app.thinking.toggle": lambda event: key_actions.toggle_thinking(ui),
        "app.tools.expand": lambda event: key_actions.toggle_tools(ui),
        "app.transcript.open": lambda event: ui.spawn(fullview.open_view(ui)),
        "app.editor.external": lambda event: ui.spawn(key_actions.external_editor(ui)),
        "app.message.copy": lambda event: ui.spawn(_copy(ui)),
        "app.model.select": lambda event: ui.spawn(ui.models.choose()),
        "app.model.cycleForward": lambda event: ui.spawn(ui.models.cycle(1)),
        "app.model.cycleBackward": lambda event: ui.spawn(ui.models.cycle(-1)),
        "app.thinking.cycle": lambda event: ui.spawn(ui.models.cycle_thinking()),
        "app.session.new": lambda event: ui.spawn(_command(ui, "/new")),
        "app.session.tree": lambda event: ui.spawn(_command(ui, "/tree")),
        "app.session.fork": lambda event: ui.spawn(_command(ui, "/fork")),
        "app.session.resume": lambda event: ui.spawn(_command(ui, "/resume")),
    }


async def _copy(ui: App) -> None:
    await _command(ui, "/copy")


async def _command(ui: App, text: str) -> None:
    await ui.builtins.run(ui, text)


def build(ui: App) -> tuple[KeyBindings, list[str]]:
    """Key bindings of the editor and the application; the problems of keybindings.json."""
    register_extra_sequences()  # Shift+Enter and CSI-u keys of terminals that report them
    chosen, problems = load_keybindings(ui.agent_dir)
    bindings = KeyBindings()
    editing = Condition(lambda: not ui.dialogs) & ~is_searching  # Ctrl+R's Enter accepts the search
    bind_paste(bindings, ui.editor, ui.parts.pastes, filter=editing)
    escape_free = Condition(lambda: not ui.dialogs) & ~has_completions
    for action, handler in _actions(ui).items():
        for sequence in bindings_for(chosen, action):  # keys a terminal cannot report were named already
            condition = escape_free if action == "app.interrupt" else editing
            bindings.add(*sequence, filter=condition)(handler)
    for sequence in bindings_for(chosen, "app.interrupt"):
        if sequence == ("escape",):
            # Two Escapes in quick succession reach the key processor as one sequence (Escape
            # is also the prefix of every Alt key), so the pair has its own binding.
            bindings.add("escape", "escape", filter=escape_free)(lambda event: key_actions.double_escape(ui))
    completion_menu.bind_keys(bindings, ui, chosen, editing)
    ui.key_help = {action: chosen.get(action, []) for action in _actions(ui)}
    from pi_mode_interactive.shortcuts import bind as bind_plugin_keys

    ui.shortcut_problems = bind_plugin_keys(ui, bindings, chosen, editing)
    return bindings, problems
