"""The ``/tree`` navigator: the session's entries as a tree, the active branch marked.

:class:`TreeRows` holds the state (rows in display order, filter, folds, search, selection) and
knows nothing of the terminal, so it is tested on its own; :class:`TreeDialog` shows it above the
editor and answers the chosen entry id (None: Escape). Keys are pi's ``app.tree.*`` and
``tui.select.*`` actions, remappable in ``keybindings.json``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.layout import BufferControl, FormattedTextControl, HSplit, Window
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.processors import BeforeInput

from pi_mode_interactive.dialogs import Dialog
from pi_mode_interactive.editor.keys import bindings_for, default_keys

FILTERS = ("default", "no-tools", "user-only", "labeled-only", "all")
"""The tree filters, in the order ``app.tree.filter.cycleForward`` goes through them."""

_BOOKKEEPING = frozenset(
    {"label", "context_edit", "custom", "model_change", "thinking_level_change", "session_info"}
)
"""Entry types the default view hides (they change settings, not the conversation)."""


@dataclass
class Row:
    node: Any
    """A :class:`pi_host.lib.sessions.tree.TreeNode`."""
    depth: int
    prefix: str
    """Tree guides (``├─ ``, ``│  ``...) drawn before the entry."""
    on_path: bool
    parent: Row | None
    segment_start: bool
    """The first row of a branch (a root, or a child of an entry with several children)."""

    @property
    def entry_id(self) -> str:
        return self.node.entry["id"]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for block in content:
        if isinstance(block, dict):
            if block.get("type") == "text":
                parts.append(str(block.get("text") or ""))
            elif block.get("type") == "image":
                parts.append("[image]")
    return " ".join(parts)


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _tool_calls(content: Any) -> str:
    calls = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") == "toolCall":
            arguments = block.get("arguments")
            brief = ""
            if isinstance(arguments, dict):
                for key in ("path", "command", "pattern", "file_path"):
                    if isinstance(arguments.get(key), str):
                        brief = arguments[key]
                        break
                else:
                    brief = json.dumps(arguments, ensure_ascii=False)[:60]
            calls.append(f"{block.get('name', '?')}({brief})")
    return ", ".join(calls)


def describe(entry: dict[str, Any]) -> tuple[str, str]:
    """``(kind, text)`` of an entry for its row; ``kind`` picks the colour."""
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message") or {}
        role = message.get("role")
        content = message.get("content")
        if role == "user":
            return "user", "user: " + _one_line(_text_of(content))
        if role == "assistant":
            text = _one_line(_text_of(content))
            calls = _tool_calls(content)
            if calls:
                text = f"{text} → {calls}" if text else f"→ {calls}"
            if not text and message.get("stopReason") in ("error", "aborted"):
                text = f"({message.get('stopReason')}: {message.get('errorMessage') or ''})"
            return "assistant", "assistant: " + (text or "(no text)")
        if role == "toolResult":
            mark = "✗" if message.get("isError") else "✓"
            return "tool", f"{mark} {message.get('toolName', 'tool')}: " + _one_line(_text_of(content), 120)
        if role == "bashExecution":
            return "tool", f"! {_one_line(str(message.get('command') or ''))}"
        if role == "custom":
            return "other", f"[{message.get('customType', 'custom')}] " + _one_line(_text_of(content))
        if role in ("branchSummary", "compactionSummary"):
            return "summary", f"[{role}] " + _one_line(str(message.get("summary") or ""))
        if role == "system":
            return "meta", "[system prompt]"
        return "other", f"[{role}]"
    if kind == "custom_message":
        return "other", f"[{entry.get('customType', 'custom')}] " + _one_line(_text_of(entry.get("content")))
    if kind == "compaction":
        return "summary", f"[compaction: {entry.get('tokensBefore', '?')} tokens] " + _one_line(
            str(entry.get("summary") or ""), 120
        )
    if kind == "branch_summary":
        return "summary", "[branch summary] " + _one_line(str(entry.get("summary") or ""), 120)
    if kind == "model_change":
        return "meta", f"[model: {entry.get('provider')}/{entry.get('modelId')}]"
    if kind == "thinking_level_change":
        return "meta", f"[thinking: {entry.get('thinkingLevel')}]"
    if kind == "session_info":
        return "meta", f"[name: {entry.get('name') or ''}]"
    if kind == "label":
        return "meta", f"[label: {entry.get('label') or '(cleared)'}]"
    if kind == "context_edit":
        return "meta", "[context edit]"
    if kind == "custom":
        return "meta", f"[custom: {entry.get('customType', '?')}]"
    return "meta", f"[{kind}]"


def flatten(roots: list[Any], leaf_id: str | None) -> list[Row]:
    """Every node in display order: depth-first, children oldest first; a chain of single
    children stays at one indent, each child of a branching entry is indented under it."""
    path_ids: set[str] = set()
    by_id: dict[str, Any] = {}
    stack = list(roots)
    while stack:
        node = stack.pop()
        by_id[node.entry["id"]] = node
        stack.extend(node.children)
    parent_of = {child.entry["id"]: node for node in by_id.values() for child in node.children}
    cursor = by_id.get(leaf_id) if leaf_id else None
    while cursor is not None:
        path_ids.add(cursor.entry["id"])
        cursor = parent_of.get(cursor.entry["id"])
    rows: list[Row] = []
    # (node, row prefix, continuation for its descendants, depth, parent row, starts a segment)
    pending: list[tuple[Any, str, str, int, Row | None, bool]] = []
    many_roots = len(roots) > 1
    for index in range(len(roots) - 1, -1, -1):
        last = index == len(roots) - 1
        if many_roots:
            pending.append((roots[index], "└─ " if last else "├─ ", "   " if last else "│  ", 0, None, True))
        else:
            pending.append((roots[index], "", "", 0, None, True))
    while pending:
        node, prefix, continuation, depth, parent, starts = pending.pop()
        row = Row(node, depth, prefix, node.entry["id"] in path_ids, parent, starts)
        rows.append(row)
        children = node.children
        if len(children) == 1:
            pending.append((children[0], continuation, continuation, depth, row, False))
            continue
        for index in range(len(children) - 1, -1, -1):
            last = index == len(children) - 1
            pending.append(
                (
                    children[index],
                    continuation + ("└─ " if last else "├─ "),
                    continuation + ("   " if last else "│  "),
                    depth + 1,
                    row,
                    True,
                )
            )
    return rows


class TreeRows:
    """The navigator's state; ``visible`` is what the current filter, folds and search show."""

    def __init__(self, roots: list[Any], leaf_id: str | None, filter_mode: str = "default") -> None:
        self.leaf_id = leaf_id
        self.rows = flatten(roots, leaf_id)
        self.filter_mode = filter_mode if filter_mode in FILTERS else "default"
        self.folded: set[str] = set()
        self.query = ""
        self.show_label_times = False
        self.visible: list[Row] = []
        self.selected = 0
        self.refresh(select=leaf_id)
        self.refresh(select=self.current_id)

    # -- what is shown --------------------------------------------------------------------------

    def passes(self, row: Row, search: bool = True) -> bool:
        entry = row.node.entry
        kind = entry.get("type")
        role = (entry.get("message") or {}).get("role") if kind == "message" else None
        mode = self.filter_mode
        if mode == "user-only":
            shown = role == "user"
        elif mode == "labeled-only":
            shown = row.node.label is not None
        elif mode == "all":
            shown = True
        elif mode == "no-tools":
            shown = kind not in _BOOKKEEPING and role != "toolResult"
        else:
            shown = kind not in _BOOKKEEPING
        if not shown:
            return False
        if self.query and search:
            text = (describe(entry)[1] + " " + (row.node.label or "")).lower()
            return all(token in text for token in self.query.lower().split())
        return True

    def _folded_away(self) -> set[int]:
        """The rows (by ``id``) under a folded row, in one pass: a row comes after its parent.
        (Walking up from each row took time quadratic in a branch's length: a minute and more
        for ``/tree`` on a 20,000-entry session.)"""
        away: set[int] = set()
        if self.folded:
            for row in self.rows:
                parent = row.parent
                if parent is not None and (id(parent) in away or parent.entry_id in self.folded):
                    away.add(id(row))
        return away

    def refresh(self, select: str | None = None) -> None:
        """Recompute the visible rows, keeping the selection on ``select`` (default: the entry
        selected now) or the nearest row shown before it."""
        wanted = select if select is not None else self.selected_id
        order = {row.entry_id: index for index, row in enumerate(self.rows)}
        away = self._folded_away()
        self.visible = [row for row in self.rows if id(row) not in away and self.passes(row)]
        if not self.visible:
            self.selected = 0
            return
        target = order.get(wanted, 0) if wanted is not None else 0
        best = 0
        for index, row in enumerate(self.visible):
            if order[row.entry_id] <= target:
                best = index
            else:
                break
        self.selected = best

    @property
    def current_id(self) -> str | None:
        """The row marked current: the leaf, or its nearest ancestor the filter shows when it
        hides the leaf (a trailing name or model change). A search does not move it: when the
        search hides that row, no row is marked."""
        away: set[int] | None = None
        for row in reversed(self.rows):
            if row.on_path and self.passes(row, search=False):
                if away is None:
                    away = self._folded_away()
                if id(row) not in away:
                    return row.entry_id
        return None

    @property
    def selected_row(self) -> Row | None:
        return self.visible[self.selected] if self.visible else None

    @property
    def selected_id(self) -> str | None:
        row = self.selected_row
        return row.entry_id if row is not None else None

    # -- actions --------------------------------------------------------------------------------

    def move(self, delta: int, wrap: bool = True) -> None:
        if not self.visible:
            return
        target = self.selected + delta
        count = len(self.visible)
        self.selected = target % count if wrap and abs(delta) == 1 else max(0, min(count - 1, target))

    def set_filter(self, mode: str) -> None:
        """Choose a filter; choosing the one in use goes back to the default (pi's toggles)."""
        self.filter_mode = "default" if mode == self.filter_mode and mode != "default" else mode
        self.refresh()

    def cycle_filter(self, step: int) -> None:
        index = FILTERS.index(self.filter_mode)
        self.filter_mode = FILTERS[(index + step) % len(FILTERS)]
        self.refresh()

    def set_query(self, query: str) -> None:
        self.query = query
        self.refresh()

    def fold_or_up(self) -> None:
        """Fold the selected entry's descendants, or (already folded / nothing below) go to the
        start of its branch, then of the branch above."""
        row = self.selected_row
        if row is None:
            return
        if row.node.children and row.entry_id not in self.folded:
            self.folded.add(row.entry_id)
            self.refresh(select=row.entry_id)
            return
        start = row if not row.segment_start else row.parent
        while start is not None and not start.segment_start:
            start = start.parent
        if start is not None:
            self.refresh(select=start.entry_id)

    def unfold_or_down(self) -> None:
        """Unfold the selected entry, or go to the next branch start (or the branch's end)."""
        row = self.selected_row
        if row is None:
            return
        if row.entry_id in self.folded:
            self.folded.discard(row.entry_id)
            self.refresh(select=row.entry_id)
            return
        for index in range(self.selected + 1, len(self.visible)):
            if self.visible[index].segment_start:
                self.selected = index
                return
        self.selected = len(self.visible) - 1

    def set_label(self, entry_id: str, label: str | None, timestamp: str | None = None) -> None:
        for row in self.rows:
            if row.entry_id == entry_id:
                row.node.label = label
                row.node.label_timestamp = timestamp if label else None
        self.refresh(select=entry_id)


class TreeDialog(Dialog):
    """The navigator shown by ``ui.ask``: Enter answers the selected entry id."""

    def __init__(
        self,
        rows: TreeRows,
        on_label: Callable[[str, str | None], Any],
        ask_text: Callable[[str, str], Awaitable[str | None]],
        spawn: Callable[[Any], Any],
        keymap: dict[str, list[str]] | None = None,
        max_visible: int = 14,
    ) -> None:
        super().__init__("Session tree")
        self.ask_text = ask_text
        self.tree = rows
        self.on_label = on_label
        self.max_visible = max_visible
        self.offset = 0
        self.search = Buffer(multiline=False, on_text_changed=lambda buffer: self._search(buffer.text))
        if keymap is None:
            keymap = default_keys()

        def bind(action: str, handler: Callable[[Any], Any]) -> None:
            for sequence in bindings_for(keymap, action):
                self.keys.add(*sequence, eager=True)(handler)

        bind("tui.select.up", lambda event: self._move(-1))
        bind("tui.select.down", lambda event: self._move(1))
        bind("tui.select.pageUp", lambda event: self._move(-self.max_visible, wrap=False))
        bind("tui.select.pageDown", lambda event: self._move(self.max_visible, wrap=False))
        bind("tui.select.confirm", lambda event: self.finish(self.tree.selected_id))
        bind("app.tree.foldOrUp", lambda event: self._then(self.tree.fold_or_up))
        bind("app.tree.unfoldOrDown", lambda event: self._then(self.tree.unfold_or_down))
        bind("app.tree.editLabel", lambda event: spawn(self._edit_label()))
        bind("app.tree.toggleLabelTimestamp", lambda event: self._toggle_label_times())
        bind("app.tree.filter.cycleForward", lambda event: self._then(lambda: self.tree.cycle_filter(1)))
        bind("app.tree.filter.cycleBackward", lambda event: self._then(lambda: self.tree.cycle_filter(-1)))
        for mode, action in (
            ("default", "app.tree.filter.default"),
            ("no-tools", "app.tree.filter.noTools"),
            ("user-only", "app.tree.filter.userOnly"),
            ("labeled-only", "app.tree.filter.labeledOnly"),
            ("all", "app.tree.filter.all"),
        ):
            bind(action, lambda event, mode=mode: self._then(lambda: self.tree.set_filter(mode)))
        hint = "↑↓ move · enter go · esc close · type to search · ⇧L label · ctrl+←/→ fold · ctrl+o filter"
        self.input_window = Window(
            BufferControl(self.search, input_processors=[BeforeInput("search: ")]), height=1
        )
        self._container = HSplit(
            [
                self.title_window(hint),
                self.input_window,
                Window(
                    FormattedTextControl(self._render_rows, show_cursor=False),
                    height=Dimension(min=1, max=max_visible, preferred=max_visible),
                    wrap_lines=False,
                    dont_extend_height=True,
                ),
                Window(FormattedTextControl(self._render_status), height=1),
            ],
            key_bindings=self.keys,
        )

    @property
    def container(self) -> Any:
        return self._container

    @property
    def focus(self) -> Any:
        return self.input_window

    # -- actions --------------------------------------------------------------------------------

    def _then(self, action: Callable[[], None]) -> None:
        action()
        self._scroll()

    def _move(self, delta: int, wrap: bool = True) -> None:
        self.tree.move(delta, wrap)
        self._scroll()

    def _search(self, text: str) -> None:
        self.tree.set_query(text)
        self._scroll()

    def _toggle_label_times(self) -> None:
        self.tree.show_label_times = not self.tree.show_label_times

    async def _edit_label(self) -> None:
        row = self.tree.selected_row
        if row is None:
            return
        answer = await self.ask_text("Label (empty clears it)", row.node.label or "")
        if answer is None:
            return
        label = answer.strip() or None
        stored = self.on_label(row.entry_id, label)
        self.tree.set_label(row.entry_id, label, (stored or {}).get("timestamp"))
        self._scroll()

    def _scroll(self) -> None:
        selected = self.tree.selected
        if selected < self.offset:
            self.offset = selected
        elif selected >= self.offset + self.max_visible:
            self.offset = selected - self.max_visible + 1
        self.offset = max(0, min(self.offset, max(0, len(self.tree.visible) - self.max_visible)))

    # -- drawing --------------------------------------------------------------------------------

    _COLOURS = {
        "user": "fg:ansicyan",
        "assistant": "",
        "tool": "fg:ansibrightblack",
        "summary": "fg:ansiyellow",
        "meta": "fg:ansibrightblack",
        "other": "fg:ansimagenta",
    }

    def _render_rows(self) -> list[tuple[str, str]]:
        tree = self.tree
        if not tree.visible:
            return [("fg:ansibrightblack", "  (no entries match)")]
        self._scroll()
        fragments: list[tuple[str, str]] = []
        current = tree.current_id
        window = tree.visible[self.offset : self.offset + self.max_visible]
        for position, row in enumerate(window, start=self.offset):
            if fragments:
                fragments.append(("", "\n"))
            chosen = position == tree.selected
            fragments.append(("reverse" if chosen else "", "›" if chosen else " "))
            fragments.append(("fg:ansibrightblack", " " + row.prefix))
            fragments.append(("fg:ansigreen bold" if row.on_path else "", "• " if row.on_path else "  "))
            if row.node.label is not None:
                fragments.append(("fg:ansiyellow", f"[{row.node.label}] "))
                if tree.show_label_times and row.node.label_timestamp:
                    fragments.append(("fg:ansibrightblack", f"{row.node.label_timestamp[:16]} "))
            kind, text = describe(row.node.entry)
            fragments.append((self._COLOURS.get(kind, ""), text))
            if row.entry_id == current:
                fragments.append(("fg:ansigreen", "  ← current"))
        return fragments

    def _render_status(self) -> list[tuple[str, str]]:
        tree = self.tree
        count = len(tree.visible)
        where = f"{tree.selected + 1}/{count}" if count else "0/0"
        folded = f" · {len(tree.folded)} folded" if tree.folded else ""
        return [("fg:ansibrightblack", f"  ({where}) · filter: {tree.filter_mode}{folded}")]
