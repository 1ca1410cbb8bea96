"""A lone Escape key without the wait for the rest of an escape sequence.

prompt-toolkit cannot tell the Escape key from the first byte of a sequence (an arrow key,
Alt+x) until more bytes come or ``ttimeoutlen`` passes, so every Escape cost those 50 ms before it
acted. Terminals write a key's whole sequence at once, so a read that returns exactly one ESC
byte is the Escape key: it is handed over at once. A sequence split across reads (a slow remote
link) still gets the timeout.
"""

from __future__ import annotations

from typing import Any

ESC = "\x1b"


class _LastChunk:
    """The terminal reader, remembering what its last read returned."""

    def __init__(self, reader: Any) -> None:
        self._reader = reader
        self.last = ""

    def read(self, *args: Any, **kwargs: Any) -> str:
        self.last = self._reader.read(*args, **kwargs)
        return self.last

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reader, name)


def escape_at_once(terminal_input: Any) -> None:
    """Make ``terminal_input`` (a prompt-toolkit Vt100 input) hand over a lone ESC at once;
    inputs without a terminal reader (pipes in tests, Windows) are left as they are."""
    reader = getattr(terminal_input, "stdin_reader", None)
    if reader is None or isinstance(reader, _LastChunk):
        return
    chunk = _LastChunk(reader)
    terminal_input.stdin_reader = chunk
    read_keys = terminal_input.read_keys

    def read_keys_escape_at_once() -> list[Any]:
        keys = read_keys()
        if not keys and chunk.last == ESC:
            return terminal_input.flush_keys()
        return keys

    terminal_input.read_keys = read_keys_escape_at_once
