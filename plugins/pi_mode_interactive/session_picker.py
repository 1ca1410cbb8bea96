"""The session picker of ``/resume`` and ``pi -r``: a dialog over the session store's listing.

Rows (name or first message, message count, age; the cwd in the all-projects view) come from the
store factory's ``list_sessions``, run in a thread: with ``quick=True`` (the JSONL store's fast
rows, newest file first) the first screen is drawn as soon as the first batch is in and the list
fills and re-sorts while the rest arrive (``Loading n/N``); a store without that option is listed
in one go. Tab switches between this project and all projects (each listed once, on first view).

Search: tokens (``"a phrase"`` in quotes, ``re:<pattern>`` for a regular expression) must all
match; a token in the name ranks first, in the first message, id (or cwd, all-projects view)
next, then a fuzzy match of the name. Tokens not found in those are looked for in the whole
user/assistant text in the background once the scope is loaded (``row.text_matches`` reads the
files; results per token are kept, and a longer token only re-reads the files its prefix matched).

The preview under the list shows the selected session's last messages (``row.last_messages``,
read in a thread when the row is first selected). Damaged files the listing skipped are counted
on the status line. Keys are pi's ``tui.select.*`` and ``app.session.*`` actions (remappable in
``keybindings.json``): Enter resumes, Escape cancels, Tab scope, Ctrl+S sort (relevance or
recent, for searches), Ctrl+N named only, Ctrl+P paths, Ctrl+R rename (when the rows can), Ctrl+D
delete (after a confirmation; ``trash`` when installed, else removed).
"""

from __future__ import annotations

import asyncio
import inspect
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import BufferControl, FormattedTextControl, HSplit, Window
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.processors import BeforeInput

from pi_mode_interactive import session_picker_view as view
from pi_mode_interactive.dialogs import Dialog
from pi_mode_interactive.editor.keys import bindings_for, default_keys
from pi_mode_interactive.session_picker_view import ACCENT, ERROR
from pi_mode_interactive.session_rows import (
    Query,
    _Keys,
    _text_has,
    delete_session_file,
    match_rank,
    parse_query,
    unlisted_tokens,
)

PREVIEW_MESSAGES = 4
SEARCH_DELAY_S = 0.15
"""Pause after the last key before the message text is searched."""
REDRAW_EVERY_S = 0.25
"""How often rows still arriving (listing, text search) are drawn."""
TOKEN_CACHE = 16
"""Text-search results kept, one token each."""


class _Scope:
    """The rows of one view (this project / all projects) and their loading."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.rows: list[Any] = []
        self.started = False
        self.done = 0
        self.total: int | None = None
        self.loaded = False
        self.skipped: set[str] = set()
        self.damaged_lines: set[str] = set()
        self.error: str | None = None


def supports_quick(list_sessions: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(list_sessions).parameters
    except (TypeError, ValueError):
        return False
    return "quick" in parameters and "progress" in parameters


class SessionPicker(Dialog):
    """Resume a session: the answer is the chosen session file's path, or None."""

    def __init__(
        self,
        list_sessions: Callable[..., list[Any]],
        *,
        cwd: str,
        agent_dir: str,
        session_dir: str | None = None,
        current: str | None = None,
        query: str = "",
        keymap: dict[str, list[str]] | None = None,
        invalidate: Callable[[], None] = lambda: None,
        screen_size: Callable[[], tuple[int, int]] = lambda: (80, 24),
        before_focus: Callable[[], None] = lambda: None,
    ) -> None:
        super().__init__("Resume a session")
        # what the picker needs of the screen, as callbacks: it draws and sizes itself from them
        self.invalidate, self.screen_size, self._before_focus = invalidate, screen_size, before_focus
        self.list_sessions = list_sessions
        self.cwd, self.agent_dir, self.session_dir = cwd, agent_dir, session_dir
        self.current = os.path.abspath(current) if current else None
        self.loop = asyncio.get_running_loop()
        self.scopes = {"current": _Scope("current"), "all": _Scope("all")}
        self.scope = self.scopes["current"]
        self.keys_of: dict[int, _Keys] = {}
        self.query = Query()
        self.sort = "relevance"
        self.named_only = False
        self.show_path = False
        self.mode = "list"  # or "delete", "rename"
        self.status: tuple[str, str] | None = None  # (style, text), shown until the next key
        self.shown: list[Any] = []
        self.scores: dict[int, int] = {}
        self.selected = 0
        self.selected_path: str | None = None  # kept across re-sorts once the user moved
        self.touched = False
        self.preview: dict[str, list[tuple[str, str]] | None] = {}
        self.found: dict[str, dict[str, bool]] = {}  # token -> path -> in the text
        self.search_generation = 0
        self.search_progress: tuple[int, int] | None = None
        self._search_handle: asyncio.TimerHandle | None = None
        self._saved_query = ""
        self.can_rename = True
        self.buffer = Buffer(
            multiline=False,
            on_text_changed=lambda _b: self._query_changed(),
            read_only=Condition(lambda: self.mode == "delete"),
        )
        self._prompt = BeforeInput(lambda: "name: " if self.mode == "rename" else "> ", style=ACCENT)
        self.input_window = Window(BufferControl(self.buffer, input_processors=[self._prompt]), height=1)
        self._container = HSplit(
            [
                Window(FormattedTextControl(lambda: view.title_line(self)), height=1),
                Window(FormattedTextControl(lambda: view.hint_line(self)), height=1),
                self.input_window,
                Window(
                    FormattedTextControl(lambda: view.list_lines(self)),
                    height=lambda: Dimension.exact(view.list_height(self)),
                    wrap_lines=False,
                ),
                Window(FormattedTextControl(lambda: view.status_line(self)), height=1),
                Window(
                    FormattedTextControl(lambda: view.preview_lines(self)),
                    height=lambda: Dimension.exact(view.preview_height(self)),
                    wrap_lines=False,
                ),
            ],
            key_bindings=self._bindings(keymap or default_keys()),
        )
        if query:
            self.buffer.text = query
            self.buffer.cursor_position = len(query)
        self._load(self.scope)

    @property
    def container(self) -> Any:
        return self._container

    @property
    def focus(self) -> Any:
        # Asked for once the dialog is in the layout: record its place there now. prompt_toolkit
        # learns who contains whom only after a redraw, and a key read before one (a terminal's
        # answer to the cursor-position query at start-up, with ``pi -r``) would otherwise fix
        # this window's key bindings for good without the dialog's own.
        try:
            self._before_focus()
        except Exception:
            pass
        return self.input_window

    @property
    def closed(self) -> bool:
        return self.answer.done()

    # --- loading ---------------------------------------------------------------------------------

    def _load(self, scope: _Scope) -> None:
        scope.started = True
        threading.Thread(target=self._list_in_thread, args=(scope,), daemon=True, name="session-list").start()

    def _list_in_thread(self, scope: _Scope) -> None:
        all_dirs = scope.name == "all"
        notes: list[str] = []

        def warn(line: str) -> None:
            notes.append(line)

        pending: list[Any] = []
        posted = [0.0]

        def progress(done: int, total: int, rows: list[Any]) -> bool:
            # The first rows at once, then a few redraws a second: each one costs the listing
            # the time the event loop holds the interpreter.
            pending.extend(rows)
            now = time.monotonic()
            if not posted[0] or done == total or now - posted[0] >= REDRAW_EVERY_S:
                batch, noted = list(pending), list(notes)
                pending.clear()
                notes.clear()
                posted[0] = now
                self._post(self._arrived, scope, done, total, batch, noted)
            return not self.closed

        try:
            if supports_quick(self.list_sessions):
                self.list_sessions(
                    self.cwd,
                    self.agent_dir,
                    self.session_dir,
                    all_dirs,
                    quick=True,
                    progress=progress,
                    warn=warn,
                )
            else:
                rows = self.list_sessions(self.cwd, self.agent_dir, self.session_dir, all_dirs)
                progress(len(rows), len(rows), rows)
        except Exception as exc:  # a store's failure is a line in the picker, not a crash
            self._post(self._failed, scope, f"{type(exc).__name__}: {exc}")
            return
        self._post(self._finished, scope)

    def _post(self, callback: Callable[..., None], *args: Any) -> None:
        if not self.closed:
            try:
                self.loop.call_soon_threadsafe(callback, *args)
            except RuntimeError:  # the loop is gone
                pass

    def _arrived(self, scope: _Scope, done: int, total: int, rows: list[Any], notes: list[str]) -> None:
        for line in notes:
            (scope.skipped if line.startswith("skipped ") else scope.damaged_lines).add(line)
        for row in rows:
            path = getattr(row, "path", None)
            if path and self.current and os.path.abspath(path) == self.current:
                continue
            self.keys_of[id(row)] = _Keys(row)
            scope.rows.append(row)
        scope.rows.sort(key=lambda row: row.modified, reverse=True)
        scope.done, scope.total = done, total
        if scope is self.scope:
            self._refilter()

    def _finished(self, scope: _Scope) -> None:
        scope.loaded = True
        if scope is self.scope:
            self._refilter()
            self._schedule_search(0)

    def _failed(self, scope: _Scope, message: str) -> None:
        scope.loaded, scope.error = True, message
        self._refresh()

    # --- filtering -------------------------------------------------------------------------------

    def _query_changed(self) -> None:
        if self.mode == "rename":
            return
        self.status = None
        self.query = parse_query(self.buffer.text)
        self.touched = False
        self.search_progress = None
        self._refilter()
        self._schedule_search(SEARCH_DELAY_S)

    def _refilter(self) -> None:
        scope = self.scope
        everywhere = scope.name == "all"
        rows = scope.rows
        if self.named_only:
            rows = [row for row in rows if self.keys_of[id(row)].name]
        if self.query.error is not None:
            shown: list[Any] = []
            self.scores = {}
        elif self.query.empty:
            shown = list(rows)  # kept newest first
            self.scores = {}
        else:
            self.scores = {}
            found = [self.found.get(token, {}) for token in self.query.tokens]
            keys_of, query = self.keys_of, self.query
            for row in rows:
                score = match_rank(query, row, keys_of[id(row)], everywhere, found)
                if score is not None:
                    self.scores[id(row)] = score
            shown = [row for row in rows if id(row) in self.scores]
            if self.sort == "relevance":
                shown.sort(key=lambda row: self.scores[id(row)])  # stable: newest first within a rank
        self.shown = shown
        if self.touched and self.selected_path is not None:
            for index, row in enumerate(shown):
                if row.path == self.selected_path:
                    self.selected = index
                    break
            else:
                self.selected = min(self.selected, max(0, len(shown) - 1))
        else:
            self.selected = 0
        self._refresh()

    # --- text search ---------------------------------------------------------------------------

    def _schedule_search(self, delay: float) -> None:
        if self._search_handle is not None:
            self._search_handle.cancel()
        self.search_generation += 1
        self._search_handle = self.loop.call_later(delay, self._start_search)

    def _start_search(self) -> None:
        self._search_handle = None
        scope, query = self.scope, self.query
        if not scope.loaded or not query.tokens or self.closed:
            return
        everywhere = scope.name == "all"
        for token in query.tokens:
            self.found.setdefault(token, {})
        while len(self.found) > TOKEN_CACHE:  # the oldest tokens go first
            stale = next((token for token in self.found if token not in query.tokens), None)
            if stale is None:
                break
            del self.found[stale]
        # A token holding a shorter one already searched can only be in the texts that one was.
        misses: dict[str, set[str]] = {}
        for token in query.tokens:
            misses[token] = set()
            for known, results in self.found.items():
                if known != token and known in token:
                    misses[token].update(path for path, hit in results.items() if not hit)
        work = []
        for row in scope.rows:
            path = getattr(row, "path", "")
            tokens = [
                token
                for token in unlisted_tokens(self.query, self.keys_of[id(row)], everywhere)
                if path not in self.found[token]
            ]
            if tokens:
                work.append((row, tokens))
        if not work:
            return
        generation = self.search_generation
        self.search_progress = (0, len(work))
        threading.Thread(
            target=self._search_in_thread, args=(generation, work, misses), daemon=True, name="session-search"
        ).start()
        self._refresh()

    def _search_in_thread(
        self, generation: int, work: list[tuple[Any, list[str]]], misses: dict[str, set[str]]
    ) -> None:
        results: list[tuple[str, str, bool]] = []
        report_at = time.monotonic() + REDRAW_EVERY_S
        for done, (row, tokens) in enumerate(work, 1):
            if generation != self.search_generation or self.closed:
                return
            path = row.path
            for token in tokens:
                if path in misses.get(token, ()):
                    hit = False
                else:
                    try:
                        hit = _text_has(row, token)
                    except Exception:
                        hit = False
                results.append((token, path, hit))
            if done == len(work) or time.monotonic() >= report_at:
                self._post(self._searched, generation, results, done, len(work))
                results = []
                report_at = time.monotonic() + REDRAW_EVERY_S

    def _searched(self, generation: int, results: list[tuple[str, str, bool]], done: int, total: int) -> None:
        for token, path, hit in results:
            if token in self.found:
                self.found[token][path] = hit
        if generation != self.search_generation:
            return
        self.search_progress = None if done == total else (done, total)
        if any(hit for _token, _path, hit in results) or done == total:
            self._refilter()
        else:
            self._refresh()

    # --- keys --------------------------------------------------------------------------------------

    def _bindings(self, keymap: dict[str, list[str]]) -> KeyBindings:
        kb = KeyBindings()

        def bind(action: str, handler: Callable[[], Any]) -> None:
            for sequence in bindings_for(keymap, action):
                kb.add(*sequence, eager=True)(lambda event: handler())

        bind("tui.select.up", lambda: self._move(-1))
        bind("tui.select.down", lambda: self._move(1))
        bind("tui.select.pageUp", lambda: self._move(-view.list_rows(self), wrap=False))
        bind("tui.select.pageDown", lambda: self._move(view.list_rows(self), wrap=False))
        bind("tui.select.confirm", self._confirm)
        bind("tui.select.cancel", self._cancel)
        bind("tui.input.tab", self._toggle_scope)
        bind("app.session.toggleSort", self._toggle_sort)
        bind("app.session.toggleNamedFilter", self._toggle_named)
        bind("app.session.togglePath", self._toggle_path)
        bind("app.session.rename", self._start_rename)
        bind("app.session.delete", self._start_delete)
        bind("app.session.deleteNoninvasive", self._start_delete)
        return kb

    def _move(self, delta: int, wrap: bool = True) -> None:
        if self.mode != "list" or not self.shown:
            return
        count = len(self.shown)
        target = self.selected + delta
        self.selected = target % count if wrap and abs(delta) == 1 else max(0, min(count - 1, target))
        self.touched, self.selected_path = True, self.shown[self.selected].path
        self.status = None
        self._refresh()

    def _confirm(self) -> None:
        if self.mode == "delete":
            self._delete()
        elif self.mode == "rename":
            self._rename()
        elif self.shown:
            self.finish(self.shown[self.selected].path)

    def _cancel(self) -> None:
        if self.mode == "delete":
            self.mode, self.status = "list", None
            self._refresh()
        elif self.mode == "rename":
            self._leave_rename()
        else:
            self.finish(None)

    def _toggle_scope(self) -> None:
        if self.mode != "list":
            return
        self.scope = self.scopes["all" if self.scope.name == "current" else "current"]
        if not self.scope.started:
            self._load(self.scope)
        self.touched = False
        self._refilter()
        self._schedule_search(0)

    def _toggle_sort(self) -> None:
        if self.mode == "list":
            self.sort = "recent" if self.sort == "relevance" else "relevance"
            self._refilter()

    def _toggle_named(self) -> None:
        if self.mode == "list":
            self.named_only = not self.named_only
            self._refilter()

    def _toggle_path(self) -> None:
        if self.mode == "list":
            self.show_path = not self.show_path
            self._refresh()

    # --- rename / delete ---------------------------------------------------------------------------

    def selected_row(self) -> Any:
        return self.shown[self.selected] if self.shown else None

    def _start_rename(self) -> None:
        row = self.selected_row()
        if self.mode != "list" or row is None:
            return
        if not hasattr(row, "rename"):
            self.status = (ERROR, "This session store cannot rename sessions")
            self._refresh()
            return
        self.mode, self._saved_query = "rename", self.buffer.text
        self.selected_path, self.touched = row.path, True
        name = getattr(row, "name", None) or ""
        self.buffer.text = name
        self.buffer.cursor_position = len(name)
        self.status = (ACCENT, "Rename the session: enter save · esc cancel")
        self._refresh()

    def _leave_rename(self, status: tuple[str, str] | None = None) -> None:
        self.buffer.text = self._saved_query  # still in rename mode: the query stays as it was
        self.buffer.cursor_position = len(self._saved_query)
        self.mode, self.status, self.touched = "list", status, True
        self._refilter()

    def _rename(self) -> None:
        row = next((row for row in self.scope.rows if row.path == self.selected_path), None)
        name = " ".join(self.buffer.text.split())
        if row is None or not name:
            return
        try:
            stored = row.rename(name)
        except Exception as exc:
            self._leave_rename((ERROR, f"Rename failed: {exc}"))
            return
        for scope in self.scopes.values():  # the same file may be a row of both views
            for other in scope.rows:
                if other.path == row.path:
                    other.name = stored
                    self.keys_of[id(other)] = _Keys(other)
        self._leave_rename((ACCENT, f"Renamed to {stored}" if stored else "Name cleared"))

    def _start_delete(self) -> None:
        row = self.selected_row()
        if self.mode != "list" or row is None:
            return
        self.mode, self.selected_path, self.touched = "delete", row.path, True
        self.status = (ERROR, "Delete this session? enter confirm · esc cancel")
        self._refresh()

    def _delete(self) -> None:
        path = self.selected_path
        self.mode = "list"
        if path is None:
            return
        ok, how = delete_session_file(path)
        if ok:
            for scope in self.scopes.values():
                scope.rows = [row for row in scope.rows if row.path != path]
            self.preview.pop(path, None)
            self.touched = False
            self.status = (ACCENT, "Session moved to the trash" if how == "trash" else "Session deleted")
        else:
            self.status = (ERROR, f"Delete failed: {how}")
        self._refilter()

    # --- drawing ---------------------------------------------------------------------------------

    def _refresh(self) -> None:
        row = self.selected_row()
        if row is not None and row.path not in self.preview and hasattr(row, "last_messages"):
            self.preview[row.path] = None
            while len(self.preview) > 64:
                del self.preview[next(iter(self.preview))]
            self.loop.run_in_executor(None, self._read_preview, row)
        self.invalidate()

    def _read_preview(self, row: Any) -> None:
        try:
            messages = row.last_messages(PREVIEW_MESSAGES)
        except Exception:
            messages = []
        self._post(self._previewed, row.path, messages)

    def _previewed(self, path: str, messages: list[tuple[str, str]]) -> None:
        if path in self.preview:
            self.preview[path] = messages
            self.invalidate()
