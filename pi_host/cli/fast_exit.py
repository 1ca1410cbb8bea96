"""Ending a finished ``pi`` command without tearing the interpreter down (issue 36).

After the last answer is printed, a normal exit spends 10-15 ms freeing the ~400 modules and
every object a run built: a tenth of a ``-p`` run, for memory the kernel takes back anyway. When
nothing can be lost by skipping it, :func:`finish` runs the ``atexit`` handlers, flushes the
standard streams and ends the process with ``os._exit``.

"Nothing can be lost" means: the command was started as ``pi`` (not ``main([...])`` from a
program), only pi-host's built-in plugins are loaded (their files are written with unbuffered
``os.write``; a third-party plugin might keep a buffered file open and rely on the interpreter's
teardown to flush it), and no non-daemon thread is still running (a normal exit would wait for
it). ``PI_HOST_NO_FAST_EXIT=1`` turns it off.
"""

from __future__ import annotations

import os
import sys
from typing import Any

_hosts: list[Any] = []


def watch(host: Any) -> None:
    """Remember a plugin host of the run (the first, and each ``/reload``'s): their records say
    which plugins were loaded."""
    _hosts.append(host)


def _safe() -> bool:
    if not _hosts or os.environ.get("PI_HOST_NO_FAST_EXIT"):
        return False
    if any(r.source != "builtin" for host in _hosts for r in host.records if r.error is None):
        return False
    threading = sys.modules.get("threading")
    if threading is not None:  # a normal exit would wait for these
        main = threading.main_thread()
        if any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate()):
            return False
    return True


def finish(code: int) -> None:
    """End the process now with ``code`` when that is safe; return (for a normal exit) otherwise."""
    import atexit

    # The handlers run here, all of them, whoever registered them and when: the two functions
    # the interpreter itself calls at exit (CPython's, present since Python 3.0).
    run_handlers = getattr(atexit, "_run_exitfuncs", None)
    forget_handlers = getattr(atexit, "_clear", None)
    if run_handlers is None or forget_handlers is None or not _safe():
        return
    run_handlers()
    forget_handlers()  # a normal exit after a failed flush below must not run them twice
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # e.g. a closed pipe: the normal exit reports it as Python does
        return
    os._exit(code)
