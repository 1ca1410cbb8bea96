"""What the session picker knows of a row, apart from the dialog: pi's short ages, the search
query (words, ``"phrases"``, ``re:``), a row's searchable fields and its rank for a query,
cutting paths from the left, and deleting a session file."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pi_host.lib.render.ansi import visible_width
from pi_mode_interactive.editor.fuzzy import fuzzy_score

__all__ = ["Query", "delete_session_file", "format_age", "match_rank", "parse_query", "unlisted_tokens"]

_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def format_age(modified: datetime, now: datetime | None = None) -> str:
    """pi's short ages: ``now``, ``5m``, ``3h``, ``2d``, ``1w``, ``4mo``, ``1y``."""
    now = now or datetime.now(UTC)
    seconds = max(0.0, (now - modified.astimezone(UTC)).total_seconds())
    minutes, hours, days = int(seconds // 60), int(seconds // 3600), int(seconds // 86400)
    if minutes < 1:
        return "now"
    if minutes < 60:
        return f"{minutes}m"
    if hours < 24:
        return f"{hours}h"
    if days < 7:
        return f"{days}d"
    if days < 30:
        return f"{days // 7}w"
    if days < 365:
        return f"{days // 30}mo"
    return f"{days // 365}y"


def _home(path: str) -> str:
    home = os.path.expanduser("~")
    if home and home != "/" and (path == home or path.startswith(home.rstrip("/") + "/")):
        return "~" + path[len(home) :]
    return path


@dataclass
class Query:
    tokens: list[str] = field(default_factory=list)
    """Lowercase, runs of whitespace as one space."""
    regex: re.Pattern[str] | None = None
    error: str | None = None

    @property
    def empty(self) -> bool:
        return not self.tokens and self.regex is None and self.error is None


def parse_query(text: str) -> Query:
    """``re:<pattern>``, or words and ``"quoted phrases"`` (unbalanced quotes: plain words)."""
    text = text.strip()
    if not text:
        return Query()
    if text.startswith("re:"):
        pattern = text[3:].strip()
        if not pattern:
            return Query(error="empty regular expression")
        try:
            return Query(regex=re.compile(pattern, re.IGNORECASE))
        except re.error as exc:
            return Query(error=f"bad regular expression: {exc}")
    if text.count('"') % 2:
        parts = text.replace('"', " ").split()
    else:
        parts = []
        for index, piece in enumerate(text.split('"')):
            parts.extend([piece] if index % 2 else piece.split())
    return Query(tokens=[" ".join(part.lower().split()) for part in parts if part.strip()])


class _Keys:
    """A row's searchable fields, lowercased once."""

    __slots__ = ("cwd", "first", "id", "name", "title")

    def __init__(self, row: Any) -> None:
        name = (getattr(row, "name", None) or "").strip()
        first = getattr(row, "first_message", "") or ""
        self.title = _CONTROL.sub(" ", name or first).strip()
        self.name = name.lower()
        self.first = " ".join(first.lower().split())
        self.id = str(getattr(row, "id", "")).lower()
        self.cwd = (getattr(row, "cwd", "") or "").lower()


def match_rank(
    query: Query, row: Any, keys: _Keys, everywhere: bool, found: list[dict[str, bool]]
) -> int | None:
    """The row's rank for the query (lower is better), or None when it does not match (yet);
    ``found``: the text-search results of each token."""
    if query.regex is not None:
        regex = query.regex
        if keys.name and regex.search(getattr(row, "name", "") or ""):
            return 0
        fields = (getattr(row, "first_message", ""), str(getattr(row, "id", "")))
        if any(regex.search(text or "") for text in fields):
            return 1
        return 1 if everywhere and regex.search(getattr(row, "cwd", "") or "") else None
    score = 0
    for token, hits in zip(query.tokens, found, strict=True):
        if token in keys.name:
            continue
        if token in keys.first or token in keys.id or (everywhere and token in keys.cwd):
            score += 1
        elif hits and hits.get(row.path):
            score += 1
        elif (keys.name and fuzzy_score(token, keys.name) is not None) or (
            everywhere and fuzzy_score(token, keys.cwd) is not None
        ):
            score += 2
        else:
            return None
    return score


def unlisted_tokens(query: Query, keys: _Keys, everywhere: bool) -> list[str]:
    """The query's tokens a row's listed fields do not hold (searched in its text)."""
    return [
        token
        for token in query.tokens
        if token not in keys.name
        and token not in keys.first
        and token not in keys.id
        and not (everywhere and token in keys.cwd)
    ]


def _cut_left(text: str, width: int) -> str:
    """``text`` in at most ``width`` columns, its start replaced by ``…`` when cut."""
    if visible_width(text) <= width:
        return text
    kept = ""
    for char in reversed(text):
        if visible_width(char + kept) > width - 1:
            break
        kept = char + kept
    return "…" + kept


def _text_has(row: Any, token: str) -> bool:
    if hasattr(row, "text_matches"):
        return bool(row.text_matches([token]))
    text = " ".join((getattr(row, "all_messages_text", "") or "").lower().split())
    return token in text


def delete_session_file(path: str) -> tuple[bool, str]:
    """Move a session file to the trash (the ``trash`` command, when installed) or remove it;
    ``(done, "trash" | "unlink" | why not)``."""
    trash = shutil.which("trash")
    if trash:
        try:
            argv = [trash, "--", path] if path.startswith("-") else [trash, path]
            done = subprocess.run(argv, capture_output=True, timeout=10, check=False).returncode == 0
        except (OSError, subprocess.SubprocessError):
            done = False
        if done or not os.path.lexists(path):
            return True, "trash"
    try:
        os.unlink(path)
    except FileNotFoundError:
        return True, "unlink"
    except OSError as exc:
        return False, exc.strerror or str(exc)
    return True, "unlink"
