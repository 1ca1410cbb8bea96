"""Keeping provider keys out of what pi's commands can read about pi itself.

With ``shellScrubProviderKeys`` the key variables are left out of each command's environment
(:func:`pi_host.lib.toolkit.local_shell.command_environment`), but a command runs as the same
user and can read its parent: ``cat /proc/$PPID/environ`` shows the environment pi was started
with, and ``ps -o args= -p $PPID`` its arguments, ``--api-key`` included. Python cannot change
what the kernel reports through its own API, so :func:`hide_keys` overwrites the bytes it
reports instead (Linux: the start-up environment and argument strings live in the process's own
memory, found through ``/proc/self/stat`` and written through ``/proc/self/mem``, the way
``setproctitle`` renames a process):

* the ``NAME=value`` entries of the named variables become NUL bytes (blank entries);
* the value after ``--api-key`` (or in ``--api-key=value``) becomes ``*`` characters;
* the variables are also unset at the C level (``os.unsetenv``), so a child started without an
  explicit environment does not inherit them either. ``os.environ``, which Python copied at
  start-up, keeps them: the model catalog reads its keys there on every request.

Elsewhere (no ``/proc``, or a kernel that refuses the write) only the C-level unset happens.
What this cannot reach is documented in docs/tools.md (the shell pi was started from, auth.json,
other processes of the same user).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable

KEY_FLAG = b"--api-key"
_lock = threading.Lock()
_hidden: set[str] = set()
_argv_done = False
_proc_ok = True
"""False once a rewrite failed: not tried again (no /proc, or the kernel refuses)."""


def _layout() -> tuple[int, int, int, int] | None:
    """``(arg_start, arg_end, env_start, env_end)`` of this process, or None where unknown."""
    try:
        with open("/proc/self/stat", "rb") as file:
            stat = file.read()
        fields = stat[stat.rindex(b")") + 2 :].split()  # the name (field 2) may hold spaces
        arg_start, arg_end, env_start, env_end = (int(value) for value in fields[45:49])
    except (OSError, ValueError):
        return None
    if not (0 < arg_start < arg_end and 0 < env_start < env_end):
        return None
    return arg_start, arg_end, env_start, env_end


def _entries(block: bytes) -> Iterable[tuple[int, bytes]]:
    """The NUL-separated strings of a block, with their offsets."""
    offset = 0
    for entry in block.split(b"\0"):
        yield offset, entry
        offset += len(entry) + 1


def _wipe_environ(mem: int, start: int, end: int, names: set[bytes]) -> None:
    for offset, entry in _entries(os.pread(mem, end - start, start)):
        if entry.partition(b"=")[0] in names:
            os.pwrite(mem, b"\0" * len(entry), start + offset)


def _wipe_key_flag(mem: int, start: int, end: int) -> None:
    follows = False
    for offset, entry in _entries(os.pread(mem, end - start, start)):
        if follows and entry:
            os.pwrite(mem, b"*" * len(entry), start + offset)
        elif entry.startswith(KEY_FLAG + b"="):
            value = len(KEY_FLAG) + 1
            os.pwrite(mem, b"*" * (len(entry) - value), start + offset + value)
        follows = entry == KEY_FLAG


def hide_keys(names: Iterable[str]) -> bool:
    """Remove the variables ``names`` from what this process shows its children and ``/proc``,
    and blank an ``--api-key`` value in its arguments. Idempotent and cheap after the first call;
    True when ``/proc`` shows none of it (False where it cannot be rewritten)."""
    global _argv_done, _proc_ok
    with _lock:
        wanted = set(names)
        for name in wanted:  # every time: a plugin may have set one again through os.environ
            try:
                os.unsetenv(name)
            except (OSError, ValueError):
                pass
        todo = wanted - _hidden
        if not todo and _argv_done:
            return _proc_ok
        _hidden.update(todo)
        if _proc_ok:
            _proc_ok = _rewrite(todo, not _argv_done)
        _argv_done = True
        return _proc_ok


def _rewrite(names: set[str], argv: bool) -> bool:
    layout = _layout()
    if layout is None:
        return False
    arg_start, arg_end, env_start, env_end = layout
    try:
        mem = os.open("/proc/self/mem", os.O_RDWR)
    except OSError:
        return False
    try:
        if names:
            _wipe_environ(mem, env_start, env_end, {os.fsencode(name) for name in names})
        if argv:
            _wipe_key_flag(mem, arg_start, arg_end)
    except OSError:
        return False
    finally:
        os.close(mem)
    return True
