"""Finding and killing what a command started: its process group, and the processes that left
the group (``setsid``, daemons) but still hold its output pipe."""

from __future__ import annotations

import os
import signal as signals


def kill_process_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid`` (falling back to the process alone).

    Only call this while ``pid`` has not been reaped, or its group still has members: otherwise
    the number may already belong to an unrelated process.
    """
    try:
        os.killpg(pid, signals.SIGKILL)
    except OSError:
        try:
            os.kill(pid, signals.SIGKILL)
        except OSError:
            pass


def group_alive(pgid: int) -> bool:
    """Whether any process is still in the process group ``pgid``."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # EPERM: a member exists that we may not signal
    return True


def pipe_holders(inode: int) -> list[int]:
    """Processes with the pipe ``inode`` open (Linux ``/proc``; empty elsewhere or when unreadable).

    A process started with ``setsid`` has left the command's process group, so a group kill misses
    it; the output pipe it inherited is how to find it again.
    """
    target = f"pipe:[{inode}]"
    me = os.getpid()
    found: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        fd_dir = f"/proc/{name}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue  # gone, or another user's
        for fd in fds:
            try:
                if os.readlink(f"{fd_dir}/{fd}") == target:
                    found.append(int(name))
                    break
            except OSError:
                continue
    return found


def kill_pids(pids: list[int]) -> None:
    """SIGKILL each of ``pids``, ignoring those already gone."""
    for pid in pids:
        try:
            os.kill(pid, signals.SIGKILL)
        except OSError:
            pass
