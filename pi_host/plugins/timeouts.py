"""Time limits for plugin hooks (the setting ``pluginHookTimeoutMs``, default 30 s).

A handler that hangs must not hang pi-host. One watchdog thread per process looks at every host
ten times a second:

* a **sync** handler blocks the event loop, so nothing in the loop can stop it: the watchdog
  sends SIGALRM to the main thread, whose handler raises :class:`HookTimeout` inside the stuck
  handler (a blocking system call is interrupted too);
* an **async** handler is awaited by a task: the watchdog cancels that task from the loop's
  thread (unless the await ended meanwhile); the dispatcher reports it as the same timeout.

Either way the dispatcher reports the plugin and goes on with the next handler. Hosts pay a
counter update per handler; the thread starts with the first dispatch of a host with a limit.
"""

from __future__ import annotations

import signal
import sys
import time
import weakref
from typing import Any


class HookTimeout(Exception):
    """Raised inside a sync handler that ran past the limit."""


class HookClock:
    """What the dispatcher of one host tells the watchdog: the sync handler running now (a token
    that changes with every call, 0 between calls) and the awaits in progress."""

    __slots__ = ("limit_s", "running", "next_token", "awaits", "expired", "__weakref__")

    def __init__(self, limit_s: float) -> None:
        self.limit_s = limit_s
        self.running = 0
        self.next_token = 0
        self.awaits: dict[int, tuple[float, Any]] = {}
        """token -> (start, task) of an async handler being awaited."""
        self.expired: set[int] = set()
        """Tokens the watchdog timed out (the dispatcher reports and forgets them)."""


_clocks: weakref.WeakSet[HookClock] = weakref.WeakSet()
_started = False
_TICK_S = 0.1


def watch(clock: HookClock) -> None:
    """Start watching ``clock`` (and, once per process, the watchdog thread and SIGALRM handler)."""
    global _started
    _clocks.add(clock)
    if _started:
        return
    _started = True
    import threading

    if threading.current_thread() is threading.main_thread():
        try:
            signal.signal(signal.SIGALRM, _on_alarm)
        except (ValueError, OSError):  # an embedding program owns signals: async limits still hold
            pass
    main = threading.main_thread().ident
    threading.Thread(target=_watchdog, args=(main,), name="pi-host-hook-watchdog", daemon=True).start()


def _on_alarm(signum: int, frame: Any) -> None:
    for clock in list(_clocks):
        if clock.running and clock.running in clock.expired:
            raise HookTimeout()


def _watchdog(main_thread: int | None) -> None:
    seen: dict[int, tuple[int, float]] = {}
    while True:
        time.sleep(_TICK_S)
        now = time.monotonic()
        for clock in list(_clocks):
            if clock.limit_s <= 0:
                continue
            token = clock.running
            key = id(clock)
            if token:
                first = seen.get(key)
                if first is None or first[0] != token:
                    seen[key] = (token, now)
                elif now - first[1] > clock.limit_s and token not in clock.expired:
                    clock.expired.add(token)
                    if main_thread is not None and signal.getsignal(signal.SIGALRM) is _on_alarm:
                        signal.pthread_kill(main_thread, signal.SIGALRM)
            else:
                seen.pop(key, None)
            for waiting, (start, task) in list(clock.awaits.items()):
                if now - start > clock.limit_s and waiting not in clock.expired:
                    clock.expired.add(waiting)
                    try:
                        task.get_loop().call_soon_threadsafe(_cut, clock, waiting, task)
                    except RuntimeError:  # the loop closed meanwhile
                        pass


def _cut(clock: HookClock, token: int, task: Any) -> None:
    # on the loop: an await that ended since the watchdog looked is not cut (the task awaits another)
    task.cancel() if token in clock.awaits else clock.expired.discard(token)


def current_task() -> Any:
    """The running asyncio task (asyncio is loaded whenever a handler returned an awaitable)."""
    return sys.modules["asyncio"].current_task()
