"""The ``/`` and ``@`` completion menu as pi draws it: rows under the editor (between its bottom
rule and the footer, which stays on screen), at most ``autocompleteMaxVisible`` of them, the
chosen row marked ``→`` in the theme's accent, the other rows' descriptions muted, and a
``(n/total)`` line when the list is longer than the window.

prompt-toolkit keeps the state (``Buffer.complete_state``); this module only draws it and moves
the highlight. Moving does not write the entry into the editor (pi's menu does not either):
Enter or Tab apply it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from prompt_toolkit.filters import Condition, has_completions
from prompt_toolkit.layout import ConditionalContainer, FormattedTextControl, Window

from pi_host.lib.render import truncate, visible_width

if TYPE_CHECKING:
    from prompt_toolkit.buffer import Buffer, CompletionState
    from prompt_toolkit.key_binding import KeyBindings

App = Any
"""The :class:`~pi_mode_interactive.app.InteractiveApp` (named, not imported: it imports this)."""

DEFAULT_VISIBLE = 5
"""pi's ``autocompleteMaxVisible`` default; the setting is bounded to 3..20."""
COLUMN_GAP = 2
SLASH_COLUMN = (12, 32)
"""The name column of a ``/`` menu: as wide as its longest name plus the gap, within these."""
OTHER_COLUMN = 32
"""Files and arguments: a fixed first column (their labels vary too much to align on)."""
MIN_DESCRIPTION = 10


def max_visible(settings: dict[str, Any] | None) -> int:
    value = (settings or {}).get("autocompleteMaxVisible")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return DEFAULT_VISIBLE
    return max(3, min(20, int(value)))


def window(selected: int | None, total: int, visible: int) -> tuple[int, int]:
    """The rows shown: the chosen one kept near the middle, the window never past either end."""
    start = max(0, min((selected or 0) - visible // 2, total - visible))
    return start, min(total, start + visible)


def _single_line(text: str) -> str:
    return " ".join(text.split())


def menu_lines(
    items: list[tuple[str, str]],
    selected: int | None,
    width: int,
    paint: Any,
    visible: int = DEFAULT_VISIBLE,
    slash: bool = False,
) -> list[str]:
    """The menu's rows (ANSI text) for ``items`` = ``(label, description)``; ``paint(name, text)``
    colours with the theme. No row is marked while nothing is chosen (an argument list before
    Tab)."""
    if not items:
        return []
    if slash:
        widest = max(visible_width(label) for label, _ in items) + COLUMN_GAP
        column = max(SLASH_COLUMN[0], min(widest, SLASH_COLUMN[1]))
    else:
        column = OTHER_COLUMN
    start, end = window(selected, len(items), visible)
    lines = [
        _row(label, description, index == selected, width, column, paint)
        for index, (label, description) in enumerate(items[start:end], start)
    ]
    if start > 0 or end < len(items):
        position = f"  ({(selected or 0) + 1}/{len(items)})"
        lines.append(paint("muted", truncate(position, max(1, width - 2), "")))
    return lines


def _row(label: str, description: str, chosen: bool, width: int, column: int, paint: Any) -> str:
    marker = "→ " if chosen else "  "
    description = _single_line(description)
    if description and width > 40:
        column = max(1, min(column, width - len(marker) - 4))
        name = truncate(label, max(1, column - COLUMN_GAP), "")
        gap = " " * max(1, column - visible_width(name))
        room = width - len(marker) - visible_width(name) - len(gap) - 2  # pi keeps 2 columns free
        if room > MIN_DESCRIPTION:
            description = truncate(description, room, "")
            if chosen:  # the whole row in the accent, as pi marks the choice
                return paint("accent", marker + name + gap + description)
            return marker + name + paint("muted", gap + description)
    name = truncate(label, max(1, width - len(marker) - 2), "")
    return paint("accent", marker + name) if chosen else marker + name


def state_items(state: CompletionState, kind: str) -> list[tuple[str, str]]:
    """``(label, description)`` rows as pi labels them: a command by its bare name, a file by its
    name with its path as the description (the completer's display is the whole path)."""
    items = []
    for completion in state.completions:
        label, description = completion.display_text, completion.display_meta_text
        if kind == "slash":
            label = label.removeprefix("/")
        elif kind == "file" and not description:
            path = label.rstrip("/")
            label, description = path.rsplit("/", 1)[-1] + label[len(path) :], path
        items.append((label, description))
    return items


def menu_kind(buffer: Buffer) -> str:
    """``slash`` (command names: their column fits the names), ``file`` (an ``@`` mention) or
    ``other`` (a command's arguments, a path)."""
    from pi_mode_interactive.slash import mentioning_file, typing_name

    before = buffer.document.text_before_cursor
    if typing_name(before):
        return "slash"
    return "file" if mentioning_file(before) else "other"


def menu_text(app: App) -> str:
    """What the menu area shows now: empty when no menu is open (the area then takes no row)."""
    state = app.editor.complete_state
    if app.dialogs or state is None or not state.completions:
        return ""
    settings = getattr(app.session.config, "settings", None)
    kind = menu_kind(app.editor)
    lines = menu_lines(
        state_items(state, kind),
        state.complete_index,
        app.screen_size()[0],
        app.paint,
        visible=max_visible(settings),
        slash=kind == "slash",
    )
    return "\n".join(lines)


def menu_height(app: App) -> int:
    """Rows the open menu takes (the live output above gives them up, so the footer stays)."""
    text = menu_text(app)
    return text.count("\n") + 1 if text else 0


def menu_container(app: App, parsed: Any) -> ConditionalContainer:
    """The menu's place in the layout; ``parsed`` turns :func:`menu_text` into fragments."""
    return ConditionalContainer(
        Window(FormattedTextControl(parsed), dont_extend_height=True),
        filter=Condition(lambda: bool(menu_text(app))),
    )


def move(buffer: Buffer, step: int) -> None:
    """Move the highlight ``step`` rows (wrapping at the ends, as pi's list does) without
    touching the editor's text; nothing chosen yet starts from the first row."""
    state = buffer.complete_state
    if state is None or not state.completions:
        return
    total = len(state.completions)
    current = state.complete_index
    if current is None:
        state.complete_index = 0 if step > 0 else total - 1
    elif abs(step) > 1:  # a page: stop at the ends instead of wrapping
        state.complete_index = max(0, min(total - 1, current + step))
    else:
        state.complete_index = (current + step) % total


def bind_keys(bindings: KeyBindings, ui: App, chosen: dict[str, list[str]], editing: Any) -> None:
    """Keys while a menu is open: Escape closes it (the draft stays), the select actions move the
    highlight, Tab takes the highlighted entry."""
    from pi_mode_interactive.editor.keys import bindings_for

    menu_open = Condition(lambda: not ui.dialogs) & has_completions

    @bindings.add("escape", filter=menu_open)
    def _close(event: Any) -> None:
        event.current_buffer.cancel_completion()

    steps = {"tui.select.up": -1, "tui.select.down": 1}
    pages = {"tui.select.pageUp": -1, "tui.select.pageDown": 1}
    for action, step in (*steps.items(), *pages.items()):
        for sequence in bindings_for(chosen, action):
            page = action in pages

            def _move(event: Any, step: int = step, page: bool = page) -> None:
                size = max_visible(getattr(ui.session.config, "settings", None)) if page else 1
                move(event.current_buffer, step * size)

            bindings.add(*sequence, filter=menu_open & editing)(_move)

    chosen_entry = Condition(
        lambda: (
            ui.editor.complete_state is not None and ui.editor.complete_state.current_completion is not None
        )
    )

    @bindings.add("tab", filter=editing & chosen_entry)
    def _accept(event: Any) -> None:
        event.current_buffer.apply_completion(event.current_buffer.complete_state.current_completion)
