"""The mode contract: what a mode plugin's ``run`` receives (a :class:`ModeRun`) and the session
factory on it.

A mode opens the run's session itself, handing in its UI and session control, so the session is
complete before its first event (``session_start`` handlers can already call ``ctx.ui``)::

    async def run(run: ModeRun) -> int:
        session = await run.open_session(ui=MyUI(), control=my_control)   # or open_session()
        for prompt in run.prompts:
            await session.prompt(prompt)
        return 0

Switching sessions (``/new``, ``/resume``, ``/fork``, ``/reload``) goes through
:mod:`pi_host.runtime.switching` with ``run.factory``; the mode then serves the new session
(:meth:`ModeRun.serve`), and the CLI closes whichever session is served when the mode returns.
"""

from __future__ import annotations

import sys
from typing import Any, Protocol


class SessionFactory(Protocol):
    """Builds the sessions of one run (implemented by :class:`pi_host.runtime.factory.SessionFactory`)."""

    session_dir: str | None
    """Where this run keeps session files (``--session-dir`` or the settings); None: the default."""

    def bind(self, *, ui: Any = None, control: Any = None) -> None:
        """The mode's UI and session control, for every session built from now on."""

    async def open(self) -> Any:
        """The run's first session."""

    async def new(
        self,
        session_file: str | None = None,
        *,
        reason: str | None = None,
        previous_session_file: str | None = None,
    ) -> Any:
        """A fresh session, or the session of ``session_file`` resumed."""

    async def on_store(self, store: Any, *, reason: str, previous_session_file: str | None) -> Any:
        """A session on a store already switched to a forked or cloned file."""

    async def reload(self, current: Any) -> Any:
        """``current``'s plugins, settings and context loaded again on its store."""


class ModeRun:
    """One run of a mode: the prompts, the parsed options and the session factory (a plain class:
    dataclasses cost start-up time)."""

    def __init__(
        self,
        factory: SessionFactory,
        prompts: list[str],
        images: list[Any],
        args: Any,
        host: Any,
        *,
        stdout: Any = None,
        stderr: Any = None,
        load_errors: list[dict[str, Any]] | None = None,
        resume_on_start: bool = False,
    ) -> None:
        self.factory = factory
        self.prompts = prompts
        self.images = images
        self.args = args
        """The parsed options: a :class:`pi_host.cli.options.RunArgs`."""
        self.host = host
        self.stdout = stdout if stdout is not None else sys.stdout
        self.stderr = stderr if stderr is not None else sys.stderr
        self.load_errors = load_errors if load_errors is not None else []
        """Plugin failures reported before the mode started (JSON mode prints them first)."""
        self.resume_on_start = resume_on_start
        """``-r`` in a mode with a UI: the mode opens its session picker before the first prompt."""
        self.session: Any = None
        """The session the mode serves (None until :meth:`open_session`)."""
        self.interrupted = False
        """A signal aborted the run: the CLI prints the one line about it (modes stay quiet)."""
        self.on_interrupt: Any = None
        """Called on the loop after a signal aborted the session (the interactive mode exits)."""

    @property
    def session_dir(self) -> str | None:
        return self.factory.session_dir

    @property
    def header(self) -> dict[str, Any] | None:
        """The served session file's header, when its store has one."""
        return getattr(self.session.store, "header", None) if self.session is not None else None

    async def open_session(self, *, ui: Any = None, control: Any = None) -> Any:
        """Build and start the run's session with the mode's ``ui`` and ``control`` (both kept
        for every later session of the run) and serve it."""
        self.factory.bind(ui=ui, control=control)
        self.session = await self.factory.open()
        return self.session

    def serve(self, session: Any) -> None:
        """Serve ``session`` from now on (after ``/new``, ``/resume``, ``/fork``, ``/reload``)."""
        self.session = session
