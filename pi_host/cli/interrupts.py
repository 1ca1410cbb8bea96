"""SIGINT, SIGTERM and SIGHUP for the ``pi`` command (reference §10.2).

The first signal aborts the running prompt: the session keeps everything it has saved (every
entry is written as it ends), the command prints one line and exits 128 + the signal's number
(130 for Ctrl-C, 143 for SIGTERM). A second signal exits at once. A run that does not stop within
:data:`GRACE_S` (a plugin hook stuck in a loop, a tool that ignores its abort) is ended anyway: the
deadline is kept by a thread, because a stuck handler holds the event loop and the main thread.

Handlers are installed with :func:`signal.signal`, not the event loop's ``add_signal_handler``,
for the same reason; they only hand the abort to the loop (``call_soon_threadsafe``) and write
with ``os.write`` (the main thread may be inside a ``print`` when the signal lands).
"""

from __future__ import annotations

import os
import signal
from typing import Any

GRACE_S = 2.0
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _say(line: str) -> None:
    try:
        os.write(2, (line + "\n").encode())
    except OSError:
        pass


class Interrupts:
    """Installed for the whole command; a run registers its session with :meth:`attach`."""

    def __init__(self) -> None:
        self.code = 0
        self.name = ""
        self._loop: Any = None
        self._request: Any = None

    def install(self) -> None:
        for signum in SIGNALS:
            try:
                signal.signal(signum, self._on_signal)
            except (ValueError, OSError):  # not the main thread (embedded use): keep the defaults
                pass

    def attach(self, loop: Any, run: Any) -> None:
        """From now on a signal aborts the session ``run`` serves (on ``loop``) and calls its
        ``on_interrupt``; before the mode opened one, the process exits at once."""
        self._loop, self._request = loop, run

    @property
    def line(self) -> str:
        return f"pi: interrupted ({self.name}): the run was aborted; the session keeps what it saved"

    def _on_signal(self, signum: int, frame: Any) -> None:
        if self.code:
            os._exit(self.code)  # a second signal: at once
        self.code = 128 + signum
        self.name = signal.Signals(signum).name
        run = self._request
        if run is None or self._loop is None or run.session is None:
            _say(f"pi: interrupted ({self.name})")  # nothing runs yet, so nothing to save
            os._exit(self.code)
        run.interrupted = True
        session, stop = run.session, run.on_interrupt  # the mode may replace both
        try:
            self._loop.call_soon_threadsafe(session.request_abort)
            if stop is not None:
                self._loop.call_soon_threadsafe(stop)
        except RuntimeError:  # the loop has closed: the run is over
            pass
        import threading

        threading.Thread(target=self._deadline, name="pi-signal-deadline", daemon=True).start()

    def _deadline(self) -> None:
        import time

        time.sleep(GRACE_S)
        _say(f"pi: interrupted ({self.name}): the run did not stop within {GRACE_S:g} s; exiting")
        os._exit(self.code)
