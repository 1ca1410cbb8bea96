"""Collecting a command's output in bounded memory.

Whatever the command prints, this keeps at most ~1.5 MiB: the first 512 KiB and a rolling window
of the last 512-1024 KiB (for ``structuredContent``), plus counters. Once the output passes the
display limits it is also streamed to a private temp file, up to ``max_log_bytes`` (``yes`` would
otherwise fill the disk); past that the log keeps its head and the notice says it was capped.
"""

from __future__ import annotations

import os
from typing import Any

from pi_host.lib.toolkit import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, Truncation, format_size, tail_of

STRUCTURED_HALF = 512 * 1024


class OutputCollector:
    def __init__(
        self, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES, max_log_bytes: int = 0
    ) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self.max_log_bytes = max_log_bytes
        """Most bytes written to the full-output file; 0 means no cap."""
        self.log_bytes = 0
        self.log_capped = False
        self.total_bytes = 0
        self.newlines = 0
        self.ends_with_newline = False
        self._line_len = 0  # bytes of the current unterminated line
        self._prev_line_len = 0  # bytes of the last terminated line
        self._head = bytearray()
        self._tail = bytearray()
        self.full_output_path: str | None = None
        self._file: Any = None

    # -- feeding ------------------------------------------------------------------------------

    def add(self, chunk: bytes) -> None:
        if not chunk:
            return
        self.total_bytes += len(chunk)
        count = chunk.count(b"\n")
        self.newlines += count
        self.ends_with_newline = chunk.endswith(b"\n")
        last = chunk.rfind(b"\n")
        if last < 0:
            self._line_len += len(chunk)
        else:
            before = chunk.rfind(b"\n", 0, last)
            self._prev_line_len = last - before - 1 if before >= 0 else self._line_len + last
            self._line_len = len(chunk) - last - 1
        self._log(chunk)
        if len(self._head) < STRUCTURED_HALF:
            take = chunk[: STRUCTURED_HALF - len(self._head)]
            self._head += take
            chunk = chunk[len(take) :]
        self._tail += chunk
        if len(self._tail) > 2 * STRUCTURED_HALF:
            del self._tail[: len(self._tail) - STRUCTURED_HALF]
        if self.full_output_path is None and (
            self.total_bytes > self.max_bytes or self.total_lines > self.max_lines
        ):
            self._open_file()

    def _open_file(self) -> None:
        import tempfile  # only once an output is big enough to be kept in a file

        path = os.path.join(tempfile.gettempdir(), f"pi-bash-{os.urandom(8).hex()}.log")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        self._file = os.fdopen(fd, "wb")
        self.full_output_path = path
        # Nothing has been dropped yet: the limits are far below the buffers' size.
        self._log(bytes(self._head))
        self._log(bytes(self._tail))

    def _log(self, data: bytes) -> None:
        if self._file is None or not data:
            return
        if self.max_log_bytes:
            room = self.max_log_bytes - self.log_bytes
            if len(data) > room:
                data = data[:room]
                self.log_capped = True
        self._file.write(data)
        self.log_bytes += len(data)
        if self.log_capped:
            self.close()  # nothing more will be written: release the file now

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    # -- reading ------------------------------------------------------------------------------

    @property
    def total_lines(self) -> int:
        if self.total_bytes == 0:
            return 0
        return self.newlines + (0 if self.ends_with_newline else 1)

    @property
    def dropped(self) -> int:
        return self.total_bytes - len(self._head) - len(self._tail)

    def _last_bytes(self, size: int) -> tuple[bytes, bool]:
        """The last ``size`` bytes and whether the byte before them is a newline (or the start)."""
        tail = bytes(self._tail)
        if len(tail) < size + 1 and self.dropped == 0:
            whole = bytes(self._head) + tail
            window = whole[-size:]
            clean = len(whole) <= size or whole[-size - 1 : -size] == b"\n"
            return window, clean
        window = tail[-size:]
        return window, tail[-size - 1 : -size] == b"\n"

    def truncation(self) -> Truncation:
        window, clean_start = self._last_bytes(self.max_bytes + 2)
        text = window.decode("utf-8", errors="replace")
        return tail_of(
            text,
            self.total_lines,
            self.total_bytes,
            self.max_lines,
            self.max_bytes,
            window_is_partial=not clean_start,
        )

    def last_line_size(self) -> int:
        return self._line_len if self._line_len else self._prev_line_len

    def display(self, extra: list[str] | tuple[str, ...] = ()) -> tuple[str, dict[str, Any] | None]:
        """The text for the model (with its notice, and ``extra`` notices in the same brackets)
        and ``details``."""
        if self.total_bytes == 0:
            return _with_notices("(no output)", list(extra)), None
        truncation = self.truncation()
        text = truncation.content
        if not truncation.truncated:
            return _with_notices(text, list(extra)), None
        end = truncation.total_lines
        start = end - truncation.output_lines + 1
        where = f"Full output: {self.full_output_path}"
        if self.log_capped:
            where = (
                f"The output log holds only the first {format_size(self.log_bytes)} of "
                f"{format_size(self.total_bytes)} (shellOutputLogMaxBytes): {self.full_output_path}"
            )
        if truncation.last_line_partial:
            notice = (
                f"Showing the last {format_size(truncation.output_bytes)} of line {end} "
                f"(that line is {format_size(self.last_line_size())}). {where}"
            )
        elif truncation.truncated_by == "lines":
            notice = f"Showing lines {start}-{end} of {end}. {where}"
        else:
            notice = f"Showing lines {start}-{end} of {end} ({format_size(self.max_bytes)} limit). {where}"
        details: dict[str, Any] = {
            "truncation": truncation.to_details(),
            "fullOutputPath": self.full_output_path,
        }
        if self.log_capped:
            details["fullOutputCapped"] = True
        return f"{text}\n\n[{'. '.join([notice, *extra])}]", details

    def structured_output(self) -> tuple[str, bool]:
        """Up to 1 MiB of output (first and last 512 KiB when longer) and whether it was cut."""
        if self.dropped == 0 and self.total_bytes <= 2 * STRUCTURED_HALF:
            return (bytes(self._head) + bytes(self._tail)).decode("utf-8", errors="replace"), False
        head = bytes(self._head).decode("utf-8", errors="replace")
        tail_bytes = bytes(self._tail[-STRUCTURED_HALF:])
        tail = tail_bytes.decode("utf-8", errors="replace")
        omitted = self.total_bytes - len(self._head) - len(tail_bytes)
        return f"{head}\n[... {omitted} bytes omitted ...]\n{tail}", True


def _with_notices(text: str, notices: list[str]) -> str:
    """``text``, a blank line and the notices in one pair of brackets (a final newline of the
    output is not doubled)."""
    if not notices:
        return text
    body = text[:-1] if text.endswith("\n") else text
    return f"{body}\n\n[{'. '.join(notices)}]"
