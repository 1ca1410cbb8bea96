"""Releasing a search that is stuck opening a FIFO as an ignore file (Linux).

Opening a FIFO for reading waits until something opens it for writing. When a thread of the
search process waits there (its ``wchan`` is the kernel's FIFO open wait), the FIFOs named like
ignore files in and above the searched tree are opened for writing without blocking and closed at
once: the waiting open returns and its read sees end-of-file, an empty ignore file. A FIFO that
no one is waiting on cannot be opened that way (ENXIO), so the others are left alone.
"""

from __future__ import annotations

import os
import stat as stat_module

IGNORE_NAMES = (".gitignore", ".ignore", ".rgignore")
_FIFO_WAIT = "wait_for_partner"  # the kernel's wait in a FIFO open with no partner yet


def waiting_on_fifo(pid: int) -> bool:
    """Whether a thread of ``pid`` waits to open a FIFO (False where ``/proc`` cannot tell)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/wchan", encoding="ascii", errors="replace") as handle:
                if handle.read().strip() == _FIFO_WAIT:
                    return True
        except OSError:
            continue
    return False


def _release(path: str) -> bool:
    try:
        if not stat_module.S_ISFIFO(os.stat(path).st_mode):  # a link to a FIFO is opened too
            return False
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False  # not a FIFO, gone, or nobody is waiting on it (ENXIO)
    os.close(fd)
    return True


def _candidates(root: str) -> list[str]:
    found: list[str] = []
    current = os.path.abspath(root)
    while True:  # parents' ignore files are read too
        found += [os.path.join(current, name) for name in IGNORE_NAMES]
        found.append(os.path.join(current, ".git", "info", "exclude"))
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    found.append(os.path.join(config, "git", "ignore"))
    return found


def release_ignore_fifos(root: str) -> int:
    """Release the FIFO ignore files a search of ``root`` may be waiting on; returns how many."""
    released = sum(_release(path) for path in _candidates(root))
    for directory, dirs, files in os.walk(root):
        if ".git" in dirs:
            dirs.remove(".git")
            released += _release(os.path.join(directory, ".git", "info", "exclude"))
        # os.walk lists FIFOs among the files.
        released += sum(_release(os.path.join(directory, name)) for name in files if name in IGNORE_NAMES)
    return released
