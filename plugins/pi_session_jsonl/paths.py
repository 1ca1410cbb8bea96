"""Where session files live and how they are named (reference §6.1)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable


class OnceWarn:
    """A ``warn`` that says each line once: one lookup may scan the same folder several times.
    (Here rather than in ``listing``: a ``--no-session`` run needs it and nothing of listing.)"""

    def __init__(self, warn: Callable[[str], None] | None) -> None:
        if warn is None:
            from pi_host.lib.sessions.store import stderr_warn

            warn = stderr_warn
        self.warn = warn
        self.seen: set[str] = set()

    def __call__(self, line: str) -> None:
        if line not in self.seen:
            self.seen.add(line)
            self.warn(line)


def encode_cwd(cwd: str) -> str:
    """``/home/dev/kite`` → ``--home-dev-kite--``."""
    trimmed = re.sub(r"^[/\\]", "", os.path.abspath(cwd))
    return "--" + re.sub(r"[/\\:]", "-", trimmed) + "--"


def default_session_dir(agent_dir: str, cwd: str) -> str:
    return os.path.join(os.path.abspath(agent_dir), "sessions", encode_cwd(cwd))


def resolve_session_dir(
    agent_dir: str, cwd: str, flag: str | None = None, setting: str | None = None
) -> tuple[str, bool]:
    """The directory for this cwd's sessions and whether it is a custom (possibly shared) one.

    Highest first: ``--session-dir``, ``PI_CODING_AGENT_SESSION_DIR``, the ``sessionDir`` setting
    (relative to cwd), then ``<agent dir>/sessions/--<cwd>--``.
    """
    default = default_session_dir(agent_dir, cwd)
    env = os.environ.get("PI_CODING_AGENT_SESSION_DIR")
    if flag:
        chosen = os.path.abspath(os.path.expanduser(flag))
    elif env:
        chosen = os.path.abspath(os.path.expanduser(env))
    elif setting:
        chosen = os.path.abspath(os.path.join(cwd, os.path.expanduser(setting)))
    else:
        return default, False
    return chosen, os.path.normpath(chosen) != os.path.normpath(default)


def session_file_name(timestamp_iso: str, session_id: str) -> str:
    """``2026-12-02T09-14-03-512Z_<id>.jsonl``."""
    return f"{timestamp_iso.replace(':', '-').replace('.', '-')}_{session_id}.jsonl"


def ensure_dir(path: str) -> None:
    # Session transcripts can hold secrets pasted by the user: keep new directories private.
    os.makedirs(path, mode=0o700, exist_ok=True)
