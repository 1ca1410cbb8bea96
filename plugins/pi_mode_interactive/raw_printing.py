"""Printing above the application without handing the terminal back to cooked mode.

pi-host prints each finished block above the editor through prompt-toolkit's
``run_in_terminal``, which erases the application, switches the terminal to cooked mode, runs
the print and redraws. Keys typed in that window were read by the terminal in cooked mode: the
kernel echoed them onto the screen, and Enter (``\\r``, turned into ``\\n`` by ICRNL) reached the
editor as a new line instead of a submit, so a prompt typed just as an answer finished stayed in
the editor, with a stray copy of it above. A print needs no cooked mode: while one runs, the
input's ``cooked_mode`` is a no-op, so keys wait unread and unechoed in raw mode and are handled
as typed once the application is back. Other users of ``run_in_terminal`` (the external editor)
still get the cooked terminal they need.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


class RawPrinting:
    """Installed on a prompt-toolkit input; :meth:`printing` marks a print in progress."""

    def __init__(self, terminal_input: Any) -> None:
        self._active = 0
        cooked_mode = getattr(terminal_input, "cooked_mode", None)
        if cooked_mode is None:
            return

        def cooked_unless_printing() -> Any:
            return contextlib.nullcontext() if self._active else cooked_mode()

        terminal_input.cooked_mode = cooked_unless_printing

    @contextlib.contextmanager
    def printing(self) -> Iterator[None]:
        self._active += 1
        try:
            yield
        finally:
            self._active -= 1
