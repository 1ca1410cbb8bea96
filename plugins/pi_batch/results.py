"""``DIR/results.jsonl``: one record a finished task, appended whole (one ``write`` of one line on
an ``O_APPEND`` descriptor, then ``fsync``), so a batch killed at any moment leaves at most a torn
last line; reading drops it (and cuts it off before the next append). A write the disk refuses
midway is cut back off, so a full disk leaves the records written before it whole."""

from __future__ import annotations

import json
import os
import threading
from typing import Any

FINAL = ("ok", "error", "timeout", "cost-limit")
"""Statuses that end a task for ``--resume``; a ``cancelled`` task runs again."""


def read_records(path: str, repair: bool = False) -> tuple[list[dict[str, Any]], list[str]]:
    """The records of ``path`` and the problems met; with ``repair``, a torn last line (no newline
    at the end) is cut off the file."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return [], []
    problems: list[str] = []
    end = data.rfind(b"\n") + 1
    if end < len(data):
        problems.append(f"{path}: torn last line ({len(data) - end} bytes) dropped")
        if repair:
            with open(path, "r+b") as handle:
                handle.truncate(end)
                handle.flush()
                os.fsync(handle.fileno())
    records = []
    for number, line in enumerate(data[:end].splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
            problems.append(f"{path}:{number}: not JSON; ignored")
            continue
        if isinstance(record, dict) and isinstance(record.get("id"), str):
            records.append(record)
        else:
            problems.append(f"{path}:{number}: not a task record; ignored")
    return records, problems


def finished_ids(records: list[dict[str, Any]]) -> set[str]:
    return {record["id"] for record in records if record.get("status") in FINAL}


class ResultsLog:
    """The appender; safe to share between threads."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, record: dict[str, Any]) -> None:
        """Write one record. Raises ``OSError`` when the file cannot take it (a full disk); the
        file then holds what it held before, not a part of the line."""
        line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        with self._lock:
            try:
                size = os.fstat(self._fd).st_size
            except OSError:
                size = None
            try:
                view = memoryview(line)
                while view:  # a regular file takes it in one write unless it is full
                    view = view[os.write(self._fd, view) :]
                os.fsync(self._fd)
            except OSError:
                self._cut(size)
                raise

    def _cut(self, size: int | None) -> None:
        """Drop a partly written line: a full disk may take the first bytes of a write."""
        if size is None:
            return
        try:
            if os.fstat(self._fd).st_size > size:
                os.ftruncate(self._fd, size)
        except OSError:  # not a regular file (a device), or the file system refuses: nothing to do
            pass

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
