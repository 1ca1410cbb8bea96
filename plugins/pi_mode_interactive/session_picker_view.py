"""How the session picker is drawn: its title, key hints, the list of rows, the status line and
the preview of the selected session, sized to the terminal."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pi_host.lib.render.ansi import truncate, visible_width
from pi_mode_interactive.session_rows import _cut_left, _home, format_age

SessionPicker = Any
"""A :class:`~pi_mode_interactive.session_picker.SessionPicker`: named, not imported (it imports
this module to draw itself)."""

LIST_ROWS = 10
PREVIEW_LINES = 6
ACCENT, MUTED, NAMED, ERROR = "fg:ansicyan", "fg:ansibrightblack", "fg:ansiyellow", "fg:ansired"


def screen_size(picker: SessionPicker) -> tuple[int, int]:
    try:
        columns, rows = picker.screen_size()
        return max(20, columns - 1), rows
    except Exception:
        return 79, 24


def free_rows(picker: SessionPicker) -> int:
    """Rows for the list and the preview: the screen less this dialog's four fixed lines and
    the editor, its rules and the footer under it."""
    return max(2, screen_size(picker)[1] - 10)


def list_rows(picker: SessionPicker) -> int:
    return max(1, min(LIST_ROWS, free_rows(picker) - 3))


def list_height(picker: SessionPicker) -> int:
    return max(1, min(list_rows(picker), len(picker.shown)))


def preview_height(picker: SessionPicker) -> int:
    room = free_rows(picker) - list_height(picker)
    return 0 if room < 3 or not picker.shown else min(PREVIEW_LINES, room)


def title_line(picker: SessionPicker) -> Any:
    scope = picker.scope
    title = (
        "Resume a session (this project)" if scope.name == "current" else "Resume a session (all projects)"
    )
    if not scope.loaded:
        progress = f"{scope.done}/{scope.total}" if scope.total is not None else "…"
        right = [(ACCENT, f"Loading {progress}")]
    elif scope.name == "current":
        right = [(ACCENT, "◉ this project"), (MUTED, " | ○ all")]
    else:
        right = [(MUTED, "○ this project | "), (ACCENT, "◉ all")]
    width = screen_size(picker)[0]
    used = len(title) + sum(len(text) for _style, text in right)
    return [("bold", title), ("", " " * max(2, width - used)), *right]


def hint_line(picker: SessionPicker) -> Any:
    parts = ["tab scope", f"ctrl+s sort ({picker.sort})"]
    parts.append("ctrl+n named" + (" (on)" if picker.named_only else ""))
    parts.append("ctrl+p path" + (" (on)" if picker.show_path else ""))
    if picker.can_rename:
        parts.append("ctrl+r rename")
    parts += ["ctrl+d delete", '"phrase"', "re:regex"]
    return [(MUTED, truncate(" · ".join(parts), screen_size(picker)[0]))]


def list_lines(picker: SessionPicker) -> Any:
    width = screen_size(picker)[0]
    scope = picker.scope
    if not picker.shown:
        if scope.error:
            text = f"  Cannot list sessions: {scope.error}"
        elif picker.query.error:
            text = f"  {picker.query.error}"
        elif not scope.loaded:
            text = "  Loading…"
        elif not picker.query.empty or picker.named_only:
            text = "  No matching sessions" + (" (searching the messages…)" if picker.search_progress else "")
        elif scope.name == "current":
            text = "  No other session in this project. Press tab to see all projects."
        else:
            text = "  No sessions found"
        return [(MUTED, truncate(text, width))]
    count, rows = len(picker.shown), list_rows(picker)
    start = max(0, min(picker.selected - rows // 2, count - rows))
    now = datetime.now(UTC)
    fragments: list[tuple[str, str]] = []
    for index in range(start, min(start + rows, count)):
        row = picker.shown[index]
        keys = picker.keys_of[id(row)]
        selected = index == picker.selected
        right = f"{row.message_count} {format_age(row.modified, now)}"
        places = []
        if picker.show_path:
            places.append(_home(row.path))
        if scope.name == "all" and getattr(row, "cwd", ""):
            places.append(_home(row.cwd))
        if places:  # cut from the left: a path's end tells most
            room = max(8, width // 2 - len(right) - 2)
            right = "  ".join(_cut_left(place, room // len(places)) for place in places) + "  " + right
        room = max(10, width - 2 - visible_width(right) - 2)
        title = truncate(keys.title or "(no messages)", room)
        style = ERROR if picker.mode == "delete" and selected else NAMED if keys.name else ""
        if selected:
            style = f"{style} bold".strip()
        if fragments:
            fragments.append(("", "\n"))
        fragments.append((ACCENT, "› ") if selected else ("", "  "))
        fragments.append((style, title))
        fragments.append(("", " " * max(2, width - 2 - visible_width(title) - visible_width(right))))
        fragments.append((ERROR if picker.mode == "delete" and selected else MUTED, right))
    return fragments


def status_line(picker: SessionPicker) -> Any:
    scope = picker.scope
    if picker.status is not None:
        return [(picker.status[0], "  " + picker.status[1])]
    parts = []
    if picker.shown:
        parts.append(f"({picker.selected + 1}/{len(picker.shown)})")
    if picker.search_progress is not None:
        done, total = picker.search_progress
        parts.append(f"searching the messages {done}/{total}…")
    if scope.skipped:
        count = len(scope.skipped)
        parts.append(f"{count} damaged file{'s' if count != 1 else ''} skipped")
    if scope.damaged_lines:
        count = len(scope.damaged_lines)
        parts.append(f"{count} file{'s' if count != 1 else ''} with damaged lines")
    return [(MUTED, truncate("  " + " · ".join(parts), screen_size(picker)[0]))]


def preview_lines(picker: SessionPicker) -> Any:
    height = preview_height(picker)
    row = picker.selected_row()
    if not height or row is None:
        return []
    width = screen_size(picker)[0]
    lines: list[list[tuple[str, str]]] = [
        [(MUTED, truncate(f"── {_home(row.path)} ", width, "…").ljust(width, "─"))]
    ]
    messages = picker.preview.get(row.path)
    if messages is None:
        lines.append([(MUTED, "  …")])
    elif not messages:
        lines.append([(MUTED, "  (no messages)")])
    else:
        room = height - 1
        for role, text in messages[-room:]:
            label = "you " if role == "user" else "pi  "
            body = truncate(" ".join(text.split()), width - 2 - len(label))
            lines.append([(ACCENT if role == "user" else MUTED, "  " + label), ("", body)])
    fragments: list[tuple[str, str]] = []
    for index, line in enumerate(lines[:height]):
        if index:
            fragments.append(("", "\n"))
        fragments.extend(line)
    return fragments
