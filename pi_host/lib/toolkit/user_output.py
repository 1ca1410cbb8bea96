"""A user command's output in bounded memory (``!cmd`` in the terminal, RPC ``bash``).

The agent's ``bash`` tool keeps a bounded window and a capped log (``plugins/pi_tool_bash``); a
command the *user* runs gets the same treatment here, so ``yes`` costs neither memory nor disk:

* :class:`OutputTail` keeps counts and the last few hundred KiB (what tail truncation needs for
  the ``bashExecution`` message) and, once the output passes the display limits, streams it to a
  private temp file of at most ``shellOutputLogMaxBytes`` (100 MiB by default; past that the file
  keeps the head);
* :class:`UpdateCoalescer` turns the pipe's chunks into live updates at most ten a second, each at
  most :data:`UPDATE_MAX_BYTES` (the newest bytes, after a ``[... N skipped ...]`` line): a client
  that draws every update cannot fall behind a command that prints faster than it can draw.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

from pi_host.config.settings import get_or_default
from pi_host.lib.toolkit.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    Truncation,
    format_size,
    tail_of,
)

__all__ = ["OutputTail", "UpdateCoalescer", "log_cap", "UPDATE_INTERVAL_S", "UPDATE_MAX_BYTES"]

UPDATE_INTERVAL_S = 0.1
"""At most one live update per this many seconds (the agent's bash tool uses the same)."""
UPDATE_MAX_BYTES = 256 * 1024
"""At most this many bytes of output in one update: 2.5 MB/s at ten a second."""


def log_cap(settings: Any) -> int:
    """``shellOutputLogMaxBytes`` (0: no cap); a value that is not a byte count gives the default."""
    settings = settings if isinstance(settings, dict) else {}
    value = get_or_default(settings, "shellOutputLogMaxBytes")
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        value = get_or_default({}, "shellOutputLogMaxBytes")
    return int(value)


class OutputTail:
    """Counts, the end of the output and the capped full-output file."""

    def __init__(
        self, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES, max_log_bytes: int = 0
    ) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self.max_log_bytes = max_log_bytes
        """Most bytes written to the full-output file; 0 means no cap."""
        self.total_bytes = 0
        self.newlines = 0
        self.ends_with_newline = False
        self.full_output_path: str | None = None
        self.log_bytes = 0
        self.log_capped = False
        self._window = bytearray()
        self._dropped = 0  # bytes cut off the front of the window
        self._keep = max_bytes + 3  # the truncation reads max_bytes + 2 and the byte before them
        self._file: Any = None

    @property
    def total_lines(self) -> int:
        if self.total_bytes == 0:
            return 0
        return self.newlines + (0 if self.ends_with_newline else 1)

    def add(self, chunk: bytes) -> None:
        if not chunk:
            return
        self.total_bytes += len(chunk)
        self.newlines += chunk.count(b"\n")
        self.ends_with_newline = chunk.endswith(b"\n")
        self._window += chunk
        if (
            self.full_output_path is None
            and not self.log_capped
            and (self.total_bytes > self.max_bytes or self.total_lines > self.max_lines)
        ):
            self._open_log()  # before anything is cut off the window: it holds all there was
        else:
            self._log(chunk)
        if len(self._window) > 4 * self._keep:  # trim now and then, not on every chunk
            cut = len(self._window) - self._keep
            del self._window[:cut]
            self._dropped += cut

    def _open_log(self) -> None:
        path = os.path.join(tempfile.gettempdir(), f"pi-bash-{os.urandom(8).hex()}.log")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError:  # no temp dir to write to: the message keeps the tail all the same
            self.log_capped = True  # and no other try on every chunk that follows
            return
        self._file = os.fdopen(fd, "wb")
        self.full_output_path = path
        self._log(bytes(self._window))

    def _log(self, data: bytes) -> None:
        if self._file is None:
            return
        if self.max_log_bytes:
            room = self.max_log_bytes - self.log_bytes
            if len(data) > room:
                data = data[:room]
                self.log_capped = True
        try:
            self._file.write(data)
            self.log_bytes += len(data)
        except OSError:  # a full disk ends the log, not the command
            self.log_capped = True
        if self.log_capped:
            self.close()

    def close(self) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass
            self._file = None

    def truncation(self) -> Truncation:
        """The tail truncation of the whole output, computed from the window."""
        size = self.max_bytes + 2
        data = bytes(self._window)
        if self._dropped == 0 and len(data) <= size:
            window, clean = data, True
        else:
            window, clean = data[-size:], data[-size - 1 : -size] == b"\n"
        text = window.decode("utf-8", errors="replace")
        return tail_of(
            text,
            self.total_lines,
            self.total_bytes,
            self.max_lines,
            self.max_bytes,
            window_is_partial=not clean,
        )


class UpdateCoalescer:
    """Calls ``deliver(bytes)`` with what arrived: at once when the last update is ``interval``
    seconds old, else from a timer; each delivery at most ``max_bytes`` (plus a notice of what
    was skipped) and never ending inside a UTF-8 character. The timer needs a running event loop
    (without one, every chunk is delivered as it comes)."""

    def __init__(
        self,
        deliver: Callable[[bytes], Any],
        interval: float = UPDATE_INTERVAL_S,
        max_bytes: int = UPDATE_MAX_BYTES,
    ) -> None:
        self.deliver = deliver
        self.interval = interval
        self.max_bytes = max_bytes
        self._pending = bytearray()
        self._skipped = 0
        self._last_sent = float("-inf")
        self._ended_line = True  # the last delivery ended with a newline (or there was none)
        self._timer: asyncio.TimerHandle | None = None
        self._failure: BaseException | None = None

    def add(self, chunk: bytes) -> None:
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure
        self._pending += chunk
        if len(self._pending) > 2 * self.max_bytes:
            self._drop()
        wait = self._last_sent + self.interval - time.monotonic()
        if wait <= 0:
            self.flush()
        elif self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # a plugin's shell feeding from a thread: no timer to set, send now
                self.flush()
                return
            self._timer = loop.call_later(wait, self._on_timer)

    def _drop(self) -> None:
        excess = len(self._pending) - self.max_bytes
        if excess > 0:
            del self._pending[:excess]
            self._skipped += excess

    def _on_timer(self) -> None:
        self._timer = None
        try:
            self.flush()
        except Exception as exc:  # raised from the next add() or close(), in the command's task
            self._failure = exc

    def flush(self, final: bool = False) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._drop()
        data = bytes(self._pending)
        keep = 0 if final else _incomplete_tail(data)
        if keep:
            data = data[:-keep]
        if not data and not (final and self._skipped):
            return
        del self._pending[: len(data)]
        if self._skipped:
            start = 0
            while start < len(data) and (data[start] & 0xC0) == 0x80:  # a character's middle
                start += 1
            self._skipped += start
            notice = f"[... {format_size(self._skipped)} skipped ...]\n".encode()
            data = (b"" if self._ended_line else b"\n") + notice + data[start:]
            self._skipped = 0
        self._last_sent = time.monotonic()
        self._ended_line = data.endswith(b"\n")
        self.deliver(data)

    def close(self) -> None:
        """Deliver what is left (at the end of the command)."""
        self.flush(final=True)
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure


def _incomplete_tail(data: bytes) -> int:
    """How many bytes at the end of ``data`` start a UTF-8 character that is not complete yet."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:  # a continuation byte: look further back for the lead
            continue
        if byte < 0x80:
            return 0
        need = 2 if byte >= 0xC0 and byte < 0xE0 else 3 if byte < 0xF0 else 4
        return back if back < need else 0
    return 0
