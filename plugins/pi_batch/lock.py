"""One batch at a time on an ``--out`` directory: ``DIR/batch.lock``, held with ``flock`` for the
life of the process (the kernel drops it when the process ends, even by SIGKILL, so a stale lock
never blocks a ``--resume``). Two batches on one ``DIR`` would both run the tasks not yet in
``results.jsonl`` and delete each other's session directories when they start a task afresh."""

from __future__ import annotations

import fcntl
import os

LOCK_NAME = "batch.lock"


class OutLocked(RuntimeError):
    """Another ``pi batch`` holds the directory."""


class OutLock:
    def __init__(self, fd: int) -> None:
        self._fd = fd

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = -1


def lock_out_dir(out_dir: str) -> OutLock:
    """Take ``out_dir``'s lock or raise :class:`OutLocked` naming the holder's pid. The descriptor
    is not inherited, so the tasks' processes never hold it."""
    path = os.path.join(out_dir, LOCK_NAME)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        os.close(fd)
        who = f" (pid {holder})" if holder else ""
        raise OutLocked(
            f"{out_dir} is in use by another pi batch{who}: wait for it to end, or choose another --out"
        ) from None
    except OSError:
        os.close(fd)
        raise
    try:  # the pid is for the message above only: the flock is the lock
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError:  # a full disk: the lock holds all the same
        pass
    return OutLock(fd)


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", errors="replace").strip()
    except OSError:
        return ""
    return text if text.isdigit() else ""
