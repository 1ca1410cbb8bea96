"""The interactive application: one inline prompt-toolkit ``Application`` for the whole run.

Data path: session events → :mod:`pi_mode_interactive.transcript` items → renderers → finished
lines printed above the application (``run_in_terminal``) and live lines drawn in it. Input goes
the other way: the editor → built-in command, ``!command`` or ``session.prompt`` (steer / follow-up
while a run streams). The session runs in tasks of the same event loop, so keys keep working.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

from prompt_toolkit.application import Application, run_in_terminal
from prompt_toolkit.buffer import Buffer

from pi_host.lib.render import (
    FooterInfo,
    RenderContext,
    ToolCallView,
    git_branch,
    safe_for_terminal,
)
from pi_mode_interactive import bindings as keymap
from pi_mode_interactive import catalog_refresh, session_events, startup_header, theming
from pi_mode_interactive.ctx_ui import InteractiveUI
from pi_mode_interactive.dialogs import Dialog
from pi_mode_interactive.feed import SessionFeed
from pi_mode_interactive.footer import SessionTotals
from pi_mode_interactive.raw_printing import RawPrinting
from pi_mode_interactive.screen import build_application
from pi_mode_interactive.slash import UnknownGuard
from pi_mode_interactive.transcript import Item, Renderers, Transcript

REFRESH_S = 0.05
"""How often streamed output is re-rendered at most (keys are drawn at once regardless)."""


def _collect_garbage_again() -> None:
    import gc

    gc.freeze()  # start-up's objects live as long as the process: keep them out of every scan
    gc.enable()


class InteractiveApp:
    def __init__(self, request: Any, ui: InteractiveUI) -> None:
        from pi_host.config.paths import agent_dir

        self.request = request
        self.session = request.session
        self.ui = ui
        """The UI every session of this run was built with (it reaches this app from now on)."""
        self.cwd = self.session.config.cwd
        self.agent_dir = agent_dir()
        settings = self.session.config.settings or {}
        self.theme, self.theme_problems = theming.startup_theme(self.session, self.agent_dir, self.cwd)
        self.renderers = Renderers(self.session.host, lambda line: self.notice(line, "error"))
        self.transcript = Transcript()
        self.transcript.show_thinking = settings.get("hideThinkingBlock") is not True
        self.feed = SessionFeed(self.transcript, self.renderers)
        self.statuses: dict[str, str] = {}
        self.widgets: dict[str, dict[str, list[str]]] = {"above": {}, "below": {}}
        self.queued: tuple[list[str], list[str]] = ([], [])
        self.working = False
        self.status_line = ""
        self.working_hint = "(esc to interrupt)"
        self.hint = ""
        """A transient line under the editor (the exit confirmation)."""
        self.dialogs: list[Dialog] = []
        self.live_lines: list[str] = []
        self.exit_code = 0
        self.git_branch = git_branch(self.cwd)
        self.session_name = self._stored_name()
        self._tasks: set[asyncio.Task[Any]] = set()
        self.user_bash_controllers: set[Any] = set()
        self._footer_key: Any = None
        self.footer_generation = 0
        self.compactions_ended = 0
        self._totals = SessionTotals()
        self._models: Any = None
        self._footer = ""
        self.key_help: dict[str, list[str]] = {}
        self.plugin_keys: list[tuple[str, str]] = []
        """Plugins' shortcuts bound now: (key, description)."""
        self.shortcut_problems: list[str] = []
        self.context_commands: list[tuple[str, str]] = []
        self.unknown_guard = UnknownGuard()
        from pi_mode_interactive.commands import builtin_registry

        self.builtins = builtin_registry()
        self._dirty = asyncio.Event()
        self._dirty_working = asyncio.Event()
        self.last_ctrl_c = 0.0
        self.last_escape = 0.0
        self.started = time.monotonic()
        self.view_app: Any = None
        """The transcript view's application while it is shown."""
        self.expand_state: dict[str, Any] = {}
        self._unsubscribe = self.session.subscribe(self._on_event)
        self.editor = self._make_editor()
        self.app = self._make_application()
        self.raw_printing = RawPrinting(self.app.input)
        ui.attach(self)

    # --- building --------------------------------------------------------------------------------

    def _make_editor(self) -> Buffer:
        from pi_mode_interactive.editing import make_editor_parts
        from pi_mode_interactive.slash import preselect_first

        self.parts = make_editor_parts(self.agent_dir, self.cwd, self.command_list, self._argument_completer)
        return Buffer(
            multiline=True,
            history=self.parts.history,
            completer=self.parts.completer,
            complete_while_typing=True,
            enable_history_search=False,
            on_completions_changed=preselect_first,
        )

    def _make_application(self) -> Application:
        return build_application(self)

    # --- running ---------------------------------------------------------------------------------

    async def run(self) -> int:
        from prompt_toolkit.patch_stdout import patch_stdout

        self.spawn(self._begin())
        self.spawn(self.load_context_commands())
        self.spawn(self._refresher())
        self.spawn(self._spinner())
        self.spawn(catalog_refresh.refresh_in_background(self))  # pi's start-up catalog refresh
        # The @-mention file index walks the project in a thread: after the first frame, so the
        # editor does not wait for it.
        asyncio.get_running_loop().call_later(0.3, self.parts.completer.start)
        asyncio.get_running_loop().call_later(0.1, _collect_garbage_again)
        self.request.on_interrupt = lambda: self.exit(130)
        with patch_stdout(raw=True):  # a plugin's stray print goes above the application
            await self.app.run_async()
        for task in list(self._tasks):
            task.cancel()
        self._flush_all()
        self._unsubscribe()
        if self.session.is_streaming:
            await self.session.abort()
        self._resume_hint()
        return self.exit_code

    def _resume_hint(self) -> None:
        from pi_mode_interactive.help_text import resume_command

        command = resume_command(self)
        if command and sys.stdout.isatty():  # as pi: a terminal user, not a script, gets it
            self._write(self.paint("muted", "To resume this session:") + "\n" + safe_for_terminal(command))

    async def _begin(self) -> None:
        """An untrusted project's question first (its answer may reload the session), then the
        header, then the command line's prompts."""
        from pi_mode_interactive import trust_prompt

        if trust_prompt.needed(self):
            await trust_prompt.ask(self)
        startup_header.show(self)
        if theming.layout_setting(self.session) == "fullscreen":
            from pi_mode_interactive.fullview import open_view

            self.spawn(open_view(self))
        if getattr(self.request, "resume_on_start", False):
            await self._resume_then_send()
        else:
            self._send_initial_prompts()

    def _send_initial_prompts(self) -> None:
        for index, prompt in enumerate(self.request.prompts):
            images = self.request.images if index == 0 else None
            self.spawn(self._send(prompt, images=images, follow_up=index > 0))

    async def _resume_then_send(self) -> None:
        """``pi -r``: the session picker first; the command line's prompts go to the choice."""
        from pi_mode_interactive.resume import resume

        await resume(self, "", at_start=True)
        self._send_initial_prompts()

    def exit(self, code: int = 0) -> None:
        self.exit_code = code
        asyncio.get_running_loop().create_task(self._exit_after_output())

    async def _exit_after_output(self) -> None:
        """Print what is still live above the application, then leave it (the editor and footer
        are erased, as pi leaves the terminal)."""
        lines, self.live_lines = self.transcript.finish(self._rc), []
        if lines and self.app.is_running:
            await self._print_above("\n".join(lines))
        if self.app.is_running and not self.app.future.done():
            self.app.exit()

    def spawn(self, coroutine: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            error = task.exception()
            from pi_host.session.errors import SessionError

            # a session's refusal (no key, no model...) is a sentence for the user, not a crash
            self.notice(
                str(error) if isinstance(error, SessionError) else f"{type(error).__name__}: {error}", "error"
            )

    def invalidate(self) -> None:
        if self.view_app is not None:
            self.view_app.invalidate()
        self._dirty.set()
        if self.working:
            self._dirty_working.set()

    # --- output ----------------------------------------------------------------------------------

    def _rc(self, state: dict[str, Any]) -> RenderContext:
        return RenderContext(
            width=self._width(),
            theme=self.theme,
            expanded=self.transcript.expanded,
            show_thinking=self.transcript.show_thinking,
            cwd=self.cwd,
            state=state,
        )

    def _width(self) -> int:
        try:
            return max(20, self.app.output.get_size().columns - 1)
        except Exception:
            return 80

    async def _refresher(self) -> None:
        """Re-render the transcript when something changed, at most every ``REFRESH_S``; hand
        finished lines to the terminal's scrollback."""
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            lines, self.live_lines = self.transcript.take(self._rc)
            if lines:
                await self._print_above("\n".join(lines))
            self.app.invalidate()
            await asyncio.sleep(REFRESH_S)

    def _flush_all(self) -> None:
        """At exit: what is still live goes to scrollback as it stands (the app is gone)."""
        lines, self.live_lines = self.transcript.finish(self._rc), []
        if lines:
            self._write("\n".join(lines))

    def _write(self, text: str) -> None:
        self.app.output.write_raw(text.replace("\n", "\r\n") + "\r\n")
        self.app.output.flush()

    async def _print_above(self, text: str) -> None:
        if self.app.is_running:
            with self.raw_printing.printing():  # keys typed meanwhile: raw, unechoed (raw_printing.py)
                await run_in_terminal(lambda: self._write(text), in_executor=False)
        else:
            self._write(text)

    def paint(self, name: str, text: str) -> str:
        return self.theme.fg(name, text)

    @staticmethod
    def fit(text: str, rc: RenderContext) -> str:
        from pi_host.lib.render import wrap

        return "\n".join(line for part in text.split("\n") for line in wrap(part, rc.width) or [""])

    def add_item(self, draw: Any) -> None:
        """A finished block drawn by ``draw(rc)`` (a banner, a report), printed above the editor."""
        self.transcript.add(Item(draw, done=True))
        self.invalidate()

    def screen_size(self) -> tuple[int, int]:
        """(columns, rows) of the terminal."""
        try:
            size = self.app.output.get_size()
            return size.columns, size.rows
        except Exception:
            return 80, 24

    def write_raw(self, text: str) -> None:
        """Bytes for the terminal itself (OSC 52 clipboard), never text from a model or a file."""
        self.app.output.write_raw(text)
        self.app.output.flush()

    def prepare_focus(self) -> None:
        # prompt_toolkit learns who contains whom only after a redraw; a dialog focused before
        # the first one (pi -r) would otherwise be missing its own keys
        try:
            self.app.layout.update_parents_relations()
        except Exception:
            pass

    def notice(self, text: str, kind: str = "info") -> None:
        colour = kind if kind in ("error", "warning") else "muted"
        self.transcript.add(Item(lambda rc, text=text: self.fit(self.paint(colour, text), rc), done=True))
        self.invalidate()

    def show_messages(self, limit: int = 200) -> None:
        """The session's conversation so far (its last ``limit`` messages), as finished items."""
        self.feed.history(self.session.messages[-limit:])
        self.invalidate()

    def apply_theme(self, name: Any) -> None:
        """Draw with the theme ``name`` from now on (what is in the scrollback keeps its colours)."""
        self.theme, problems = theming.load_theme_for(self.session, name, self.agent_dir, self.cwd)
        for line in problems:
            self.notice(line, "warning")
        self.invalidate()

    # --- session events --------------------------------------------------------------------------

    def _on_event(self, event: dict[str, Any]) -> None:
        session_events.handle(self, event)

    # --- bottom of the screen ----------------------------------------------------------------

    async def _spinner(self) -> None:
        ticks = 0
        while True:
            if not self.working:  # idle: nothing wakes up until a run starts
                self._dirty_working.clear()
                await self._dirty_working.wait()
            await asyncio.sleep(0.1)
            self.app.invalidate()
            ticks += 1
            if self.feed.started and ticks % 5 == 0:  # a running tool's seconds so far
                self._dirty.set()

    def footer_info(self) -> FooterInfo:
        from pi_mode_interactive.footer import footer_info

        return footer_info(self, self._totals)

    def footer_text(self) -> str:
        """The footer, drawn again only when something it shows may have changed."""
        key = (self.footer_generation, len(self.session.messages), self.session.model,
               self.session.thinking_level, self.session_name, tuple(self.statuses.items()),
               self._width())  # fmt: skip
        if key != self._footer_key:
            self._footer_key, self._footer = key, self.renderers.footer(self.footer_info(), self._rc({}))
        return self._footer

    def _stored_name(self) -> str | None:
        name = None
        for entry in self.session.store.entries():
            if entry.get("type") == "session_info":
                name = entry.get("name") or None
        return name

    # --- dialogs and editor (ctx.ui) -----------------------------------------------------------

    async def ask(self, dialog: Dialog, timeout: float | None = None, signal: Any = None) -> Any:
        self.editor.cancel_completion()  # a menu left open would sit over the dialog
        self.dialogs.append(dialog)
        # Before the first redraw (pi -r) the layout does not know the dialog's parents yet, and
        # its own keys would not be found.
        self.app.layout.update_parents_relations()
        self.app.layout.focus(dialog.focus)
        self.app.invalidate()
        remove = signal.add_listener(lambda: dialog.finish(dialog.default)) if signal is not None else None
        try:
            return (
                await asyncio.wait_for(asyncio.shield(dialog.answer), timeout)
                if timeout
                else await dialog.answer
            )
        except TimeoutError:
            return dialog.default
        finally:
            if remove is not None:
                remove()
            self.dialogs.remove(dialog)
            self.app.layout.focus(self.dialogs[-1].focus if self.dialogs else self.editor_window)
            self.app.invalidate()

    async def pick(self, title: str, items: list[tuple[Any, str, str]], initial: Any = None) -> Any:
        """A value of ``items`` chosen in the picker, or None (Escape)."""
        from pi_mode_interactive.dialogs import SelectDialog

        return await self.ask(SelectDialog(title, items, initial=initial))

    @property
    def models(self) -> Any:
        from pi_mode_interactive.models import ModelChooser

        if self._models is None or self._models.session is not self.session:
            self._models = ModelChooser(self)
        return self._models

    def set_title(self, title: str) -> None:
        self.app.output.set_title(title)
        self.app.output.flush()

    def set_editor_text(self, text: str) -> None:
        self.editor.text = text
        self.editor.cursor_position = len(text)
        self.app.invalidate()

    # --- input -------------------------------------------------------------------------------

    def command_list(self) -> list[tuple[str, str]]:
        """The ``/`` menu: built-ins, plugin commands, then prompt templates and skills."""
        found = [(name, command.description) for name, command in self.builtins.items()]
        for name, command in self.session.commands.items():
            found.append((name, getattr(command, "description", "") or ""))
        return found + self.context_commands

    async def load_context_commands(self) -> None:
        """Templates and skills are discovered asynchronously: listed once per session (again
        after ``/reload``), not on every key."""
        from pi_mode_interactive.slash import context_commands

        session = self.session
        found = await context_commands(session)
        if session is self.session:
            self.context_commands = found

    def _argument_completer(self, name: str) -> Any:
        """A plugin command's ``complete(prefix)``, for ``/name <Tab>``."""
        return getattr(self.session.commands.get(name), "complete", None)

    def submit(self, follow_up: bool = False) -> None:
        raw = self.editor.text
        if not raw.strip() or self.unknown_guard.holds(self, raw):
            return
        text = self.parts.expand(raw)
        self.parts.history.append_string(text)  # the pasted text itself: markers mean nothing later
        self.editor.reset()
        self.spawn(self._send(text, follow_up=follow_up))

    async def _send(self, text: str, images: Any = None, follow_up: bool = False) -> None:
        from pi_mode_interactive import shell

        text, found = self.parts.attachments(text, images)
        if text.startswith("!"):
            await shell.run_user_bash(self, text)
            return
        if text.startswith("/") and await self.builtins.run(self, text):
            return
        if self.session.is_streaming:
            await self.session.prompt(
                text,
                images=found,
                streaming_behavior="followUp" if follow_up else "steer",
                source="interactive",
            )
            return
        await self.session.prompt(text, images=found, source="interactive")

    def restore_queue(self) -> None:
        queued = self.session.clear_queue()
        texts = list(queued.get("steering", [])) + list(queued.get("followUp", []))
        if self.editor.text.strip():
            texts.append(self.editor.text)
        if texts:
            self.set_editor_text("\n".join(texts))

    def set_working(self, label: str | None, hint: str = "(esc to interrupt)") -> None:
        """Show the spinner line with ``label`` (None: hide it) for work outside a run."""
        self.working = label is not None
        self.working_hint = hint
        if label is not None:
            self.status_line = label
            self._dirty_working.set()
        self.invalidate()

    def live_tool(self, view: ToolCallView) -> Item:
        return self.feed.live_tool(view)

    def forget_tool(self, call_id: str) -> None:
        self.feed.forget_tool(call_id)
        self.invalidate()

    def switch_session(self, session: Any) -> None:
        """Show ``session`` from now on (``/new``); the caller closed the old one."""
        self._unsubscribe()
        self.session = session
        self.request.serve(session)
        self._unsubscribe = session.subscribe(self._on_event)
        self.renderers = Renderers(session.host, lambda line: self.notice(line, "error"))
        self.session_name = self._stored_name()
        self.queued = ([], [])
        self.context_commands = []
        self.spawn(self.load_context_commands())
        self.feed.reset(self.renderers)
        self.invalidate()

    async def shutdown_when_idle(self) -> None:
        """``ctx.shutdown()``: exit once the run and its queued messages are done."""
        while self.session.is_streaming or self.session.has_pending_messages():
            await self.session.wait_for_idle()
            await asyncio.sleep(0)
        self.exit(0)

    def reload_keys(self) -> None:
        bindings, problems = keymap.build(self)
        self.app.key_bindings = bindings
        for line in problems:
            self.notice(f"keybindings.json: {line}", "warning")
        for line in self.shortcut_problems:
            self.notice(line, "warning")


async def run_interactive(request: Any) -> int:
    from pi_host.runtime.switching import SessionControl

    ui = InteractiveUI()
    box: list[InteractiveApp] = []  # the app exists once the first session is open

    def reloaded() -> None:
        box[0].reload_keys()
        box[0].parts.refresh()

    # What ``ctx.new_session`` / ``fork`` / ``switch_session`` / ``reload`` / ``shutdown`` do in
    # this mode: the same as ``/new``, ``/fork``, ``/resume``, ``/reload``, ``/quit``.
    control = SessionControl(
        request.factory,
        lambda fresh: box[0].switch_session(fresh),
        shutdown=lambda: box[0].spawn(box[0].shutdown_when_idle()),
        reloaded=reloaded,
        fork_text=lambda text: box[0].set_editor_text(text),
    )
    await request.open_session(ui=ui, control=control)
    box.append(InteractiveApp(request, ui))
    return await box[0].run()
