"""The ``/`` menu's behaviour: the first match pre-selected and run by Enter, prompt templates and
skills listed beside the commands, and an unknown ``/name`` held back instead of reaching the model.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prompt_toolkit.buffer import Buffer

    from pi_mode_interactive.screen_api import Screen

NAME = re.compile(r"^/([A-Za-z0-9_][\w:.-]*)$")
"""What the menu completes: ``/`` and a name, no space and no second ``/`` (a path is text)."""


def typing_name(text: str) -> bool:
    """True while the editor holds ``/`` plus a partial command name and nothing else."""
    first = text.split("\n", 1)[0]
    return text == first and (first == "/" or NAME.match(first) is not None)


def preselect_first(buffer: Buffer) -> None:
    """``on_completions_changed``: mark the first command or ``@`` file as chosen without inserting
    it (pi draws the first match highlighted and Enter or Tab takes it); arrows then move from
    there. A command's argument list is left unchosen: Tab there steps through the values."""
    state = buffer.complete_state
    if state is None or state.complete_index is not None or not state.completions:
        return
    if typing_name(buffer.text) or mentioning_file(buffer.document.text_before_cursor):
        state.complete_index = 0


def mentioning_file(text_before_cursor: str) -> bool:
    """True while the cursor ends an ``@`` file mention (the ``@`` menu is open for it)."""
    from pi_mode_interactive.editor.completion import extract_mention

    return extract_mention(text_before_cursor.rsplit("\n", 1)[-1]) is not None


def enter_on_menu(buffer: Buffer) -> str:
    """What Enter does while a completion menu is open: ``"run"`` (a command was chosen and is now
    in the editor: submit it), ``"insert"`` (a file or argument was inserted: keep editing) or
    ``"none"`` (no menu, or nothing chosen)."""
    state = buffer.complete_state
    if state is None or state.current_completion is None:
        return "none"
    command = typing_name(buffer.document.text_before_cursor) and buffer.document.is_cursor_at_the_end
    buffer.apply_completion(state.current_completion)
    return "run" if command else "insert"


async def context_commands(session: Any) -> list[tuple[str, str]]:
    """``(name, description)`` of the commands context sources expand: prompt templates and
    ``skill:`` commands, in the sources' order (a failing source is reported and skipped)."""
    from pi_host.runtime.context_commands import context_source_commands

    return [
        (str(item["name"]), str(item.get("description") or ""))
        for item in await context_source_commands(session)
        if item.get("name")
    ]


def unknown_command(ui: Screen, text: str) -> str | None:
    """The name of ``text``'s ``/command`` when nothing knows it (no built-in, plugin command,
    prompt template or skill), else None. Text after the name does not matter."""
    head = text.split(None, 1)[0] if text.strip() else ""
    match = NAME.match(head)
    if match is None:
        return None
    name = match.group(1)
    known = {known for known, _ in ui.command_list()}
    return None if name in known else name


class UnknownGuard:
    """Enter on ``/xyz`` that names nothing: say so and keep the text; Enter again on the same text
    sends it as a message (it may be meant for the model)."""

    def __init__(self) -> None:
        self._warned: str | None = None

    def holds(self, ui: Screen, text: str) -> bool:
        name = unknown_command(ui, text)
        if name is None or self._warned == text:
            self._warned = None
            return False
        self._warned = text
        ui.notice(f"Unknown command /{name}. Press Enter again to send it to the model as text.", "warning")
        return True
