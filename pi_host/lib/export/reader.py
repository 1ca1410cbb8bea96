"""A tolerant reader of pi's JSONL session files, just enough for an export.

It does not validate entries the way the session stores do: an export should show whatever a
file holds, so every JSON object after the header is kept. Lines that are not JSON objects (a
torn write, an editor accident) are skipped and their numbers reported, so the caller can name
the first one. Files from before version 3 get the two fixes that matter for display: ids and
parent links for v1's linear entries, and v2's ``hookMessage`` role renamed ``custom``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import orjson

from pi_host.lib.export.errors import ExportError


@dataclass
class SessionFile:
    header: dict[str, Any]
    entries: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    """1-based numbers of the malformed lines that were skipped."""


def _parse(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        pass
    # orjson refuses some inputs stdlib json accepts (very deep nesting, lone surrogates).
    try:
        return json.loads(line.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None


def read_session(path: str) -> SessionFile:
    """Parse ``path``; :class:`ExportError` when it cannot be read or is not a session file."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise ExportError(f"cannot export {path}: no such file") from None
    except IsADirectoryError:
        raise ExportError(f"cannot export {path}: it is a directory") from None
    except OSError as exc:
        raise ExportError(f"cannot export {path}: {exc.strerror or exc}") from None

    header: dict[str, Any] | None = None
    entries: list[dict[str, Any]] = []
    skipped: list[int] = []
    for number, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        value = _parse(raw)
        if not isinstance(value, dict):
            skipped.append(number)
            continue
        if header is None:
            # pi's rule (reference §6.7): the first parsed object must be the session header.
            if value.get("type") != "session" or not isinstance(value.get("id"), str):
                first_bad = f" (line {skipped[0]} is malformed)" if skipped else ""
                raise ExportError(
                    f"cannot export {path}: not a pi session file: line {number} is not a session header"
                    + first_bad
                )
            header = value
            continue
        entries.append(value)
    if header is None:
        reason = f"no session header (line {skipped[0]} is malformed)" if skipped else "the file is empty"
        raise ExportError(f"cannot export {path}: not a pi session file: {reason}")
    _upgrade(header, entries)
    return SessionFile(header=header, entries=entries, skipped=skipped)


def _upgrade(header: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    """Bring v1/v2 entries to the v3 shape in memory (the file is never rewritten)."""
    previous: str | None = None
    taken = {e["id"] for e in entries if isinstance(e.get("id"), str)}
    for index, entry in enumerate(entries):
        if not isinstance(entry.get("id"), str):
            # v1 entries have no ids: a linear chain in file order.
            fresh = f"line-{index + 1}"
            while fresh in taken:
                fresh += "'"
            taken.add(fresh)
            entry["id"] = fresh
            if "parentId" not in entry:
                entry["parentId"] = previous
        previous = entry["id"]
        message = entry.get("message")
        if isinstance(message, dict) and message.get("role") == "hookMessage":
            message["role"] = "custom"


def default_destination(source: str) -> str:
    """pi's name for an export in the current directory: ``pi-session-<file name minus .jsonl>.html``."""
    name = os.path.basename(source.rstrip("/"))
    if name.endswith(".jsonl"):
        name = name[: -len(".jsonl")]
    return f"pi-session-{name}.html"
