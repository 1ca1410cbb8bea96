"""Prompt history shared by every interactive session, stored as JSON lines in the agent dir.

File format (``<agent dir>/prompt-history.jsonl``), one object per line::

    {"text": "fix the tests\\nin tests/", "cwd": "/home/me/project", "ts": "2025-01-02T03:04:05.678Z"}

* JSON escapes newlines, so multi-line prompts stay on one physical line. Lines are split on
  ``\\n`` only (never ``str.splitlines``, which would also split on U+2028 and friends).
* A line that is not valid JSON, or not an object with a non-empty string ``text``, is skipped.
  The file is never rewritten or truncated by this class; only whole lines are appended.
* Each append is one ``os.write`` on a descriptor opened with ``O_APPEND``, so concurrent pi
  processes interleave whole lines. If the file does not end with a newline (a previous writer
  crashed mid-line) the new record starts with one, so only the broken line is lost.
* Consecutive duplicates are not stored and are collapsed when loading; loading keeps the most
  recent ``max_entries`` (default 1000) prompts.
* I/O errors never propagate: a failed load yields what could be read, a failed append keeps
  the prompt in memory for this session. The last error is kept in ``last_error``.
"""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from prompt_toolkit.history import History

DEFAULT_MAX_ENTRIES = 1000
HISTORY_FILE_NAME = "prompt-history.jsonl"


def _timestamp() -> str:
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def history_path(agent_dir: str | os.PathLike[str]) -> Path:
    """The history file the app should pass to :class:`PromptHistory`."""
    return Path(agent_dir) / HISTORY_FILE_NAME


class PromptHistory(History):
    """A prompt_toolkit ``History`` backed by an append-only JSONL file.

    Works with everything prompt_toolkit builds on ``History``: Up/Down browsing, prefix search
    (``Buffer(enable_history_search=True)``) and Ctrl+R incremental search (``SearchToolbar``).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        cwd: str | os.PathLike[str] | None = None,
        *,
        max_entries: int = DEFAULT_MAX_ENTRIES,
    ) -> None:
        super().__init__()
        self.path = Path(path)
        self.cwd = str(cwd) if cwd is not None else os.getcwd()
        self.max_entries = max(1, int(max_entries))
        self.last_error: OSError | None = None
        self._last_stored: str | None = None

    # -- loading ---------------------------------------------------------------------------------

    def _read_entries(self) -> list[str]:
        """All valid prompts, oldest first, consecutive duplicates collapsed, capped."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as error:
            self.last_error = error
            return []
        # Keep more raw lines than needed so corrupt lines and duplicates do not shrink the result
        # much, without parsing an arbitrarily large file.
        raw_lines = deque(data.split(b"\n"), maxlen=self.max_entries * 4)
        entries: list[str] = []
        for raw in raw_lines:
            raw = raw.strip()
            if not raw:
                continue
            try:
                record = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(record, dict):
                continue
            text = record.get("text")
            if not isinstance(text, str) or not text.strip():
                continue
            if entries and entries[-1] == text:
                continue
            entries.append(text)
        return entries[-self.max_entries :]

    def load_history_strings(self) -> Iterable[str]:
        entries = self._read_entries()
        if entries:
            self._last_stored = entries[-1]
        return reversed(entries)

    # -- storing ---------------------------------------------------------------------------------

    def append_string(self, string: str) -> None:
        """Add a submitted prompt (surrounding whitespace trimmed); blank or repeated prompts are ignored."""
        text = string.strip()
        if not text:
            return
        most_recent = self._loaded_strings[0] if self._loaded_strings else self._last_stored
        if text == most_recent:
            return
        self._loaded_strings.insert(0, text)
        self.store_string(text)

    def store_string(self, string: str) -> None:
        if string == self._last_stored:
            return
        record = {"text": string, "cwd": self.cwd, "ts": _timestamp()}
        line = json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                size = os.fstat(fd).st_size
                if size > 0 and os.pread(fd, 1, size - 1) != b"\n":
                    line = b"\n" + line
                os.write(fd, line)
            finally:
                os.close(fd)
        except OSError as error:
            self.last_error = error
            return
        self._last_stored = string

    @property
    def entries(self) -> list[str]:
        """Prompts known so far, oldest first (what ``get_strings`` returns)."""
        return self.get_strings()
