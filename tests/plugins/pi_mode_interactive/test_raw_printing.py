"""While pi-host prints above the application the terminal stays in raw mode, so keys typed
meanwhile are neither echoed by the tty nor turned from Enter into a newline (ICRNL); other
``run_in_terminal`` users still get cooked mode."""

from __future__ import annotations

import os
import pty
import termios

from pi_mode_interactive.raw_printing import RawPrinting
from prompt_toolkit.input.vt100 import Vt100Input


def _cooked(fd: int) -> bool:
    return bool(termios.tcgetattr(fd)[3] & termios.ICANON)


def test_printing_keeps_raw_mode_and_other_uses_get_cooked_mode():
    master, slave = pty.openpty()
    try:
        with os.fdopen(slave, "r", closefd=False) as stdin:
            terminal_input = Vt100Input(stdin)
            printer = RawPrinting(terminal_input)
            with terminal_input.raw_mode():
                assert not _cooked(slave)
                with terminal_input.cooked_mode():  # the external editor's way
                    assert _cooked(slave)
                with printer.printing(), terminal_input.cooked_mode():  # a print above
                    assert not _cooked(slave)  # before: ICANON and ECHO back on for the print
                with terminal_input.cooked_mode():
                    assert _cooked(slave)
    finally:
        os.close(master)
        os.close(slave)
