"""The JSON files pi and pi-host share in the agent dir (``settings.json``, ``trust.json``,
``auth.json``...): reading one object, and changing it safely next to a running pi.

Writers take ``<path>.lock``, a *directory* created with an atomic ``mkdir`` (the convention of
the ``proper-lockfile`` package pi uses), re-read the file under it, change only what they mean
to, and replace the file atomically: keys written by pi or other programs survive, and a file
that is not valid JSON is left alone rather than lost.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from typing import Any


def read_json_object(path: str) -> tuple[dict[str, Any], str | None]:
    """The object in ``path`` (empty when missing) and an error line when it is unreadable."""
    try:
        with open(path, encoding="utf-8-sig") as handle:
            text = handle.read()
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        return {}, f"{path}: {exc.strerror or exc}"
    if not text.strip():
        return {}, None
    try:
        data = json.loads(text)
    except ValueError as exc:
        return {}, f"{path}: invalid JSON: {exc}"
    if not isinstance(data, dict):
        return {}, f"{path}: expected a JSON object"
    return data, None


STALE_LOCK_SECONDS = 30.0
"""A lock untouched this long belongs to a crashed writer. pi's own holders refresh theirs every
15 s (its auth.json refresh lock: stale after 30 s), so a shorter limit could take over a lock pi
still holds while it waits on a provider."""
LOCK_REFRESH_SECONDS = 5.0
"""While held, the lock's time is refreshed this often: a holder waiting on a slow OAuth refresh
(up to 15 s) never looks stale, to pi-host nor to pi (whose plain writes take over after 10 s)."""


@contextlib.contextmanager
def file_lock(path: str, timeout: float = STALE_LOCK_SECONDS + 5) -> Iterator[None]:
    """Hold ``<path>.lock`` (a directory, as pi's proper-lockfile makes it) while changing
    ``path``; a lock untouched for :data:`STALE_LOCK_SECONDS` belongs to a crashed writer and is
    taken over. A holder keeps its lock fresh; a waiter gives up after ``timeout`` seconds."""
    lock_path = path + ".lock"
    os.makedirs(os.path.dirname(lock_path) or ".", exist_ok=True)
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.mkdir(lock_path)
            break
        except FileExistsError:
            try:
                age = time.time() - os.stat(lock_path).st_mtime
            except FileNotFoundError:
                continue  # released between our mkdir and stat
            if age > STALE_LOCK_SECONDS:
                with contextlib.suppress(OSError):
                    if os.path.isdir(lock_path):
                        os.rmdir(lock_path)
                    else:
                        os.unlink(lock_path)
                continue
            if time.monotonic() > deadline:
                raise TimeoutError(f"{path} is locked by another writer ({lock_path})") from None
            time.sleep(0.005)
    released = _keep_fresh(lock_path)
    try:
        yield
    finally:
        released.set()
        with contextlib.suppress(OSError):
            os.rmdir(lock_path)


def _keep_fresh(lock_path: str) -> Any:
    """Touch the held lock every :data:`LOCK_REFRESH_SECONDS` until the returned event is set
    (a daemon thread: a hold is short, and the thread ends with it)."""
    import threading

    released = threading.Event()

    def touch() -> None:
        while not released.wait(LOCK_REFRESH_SECONDS):
            with contextlib.suppress(OSError):
                os.utime(lock_path)

    with contextlib.suppress(RuntimeError):  # no new threads at interpreter shutdown
        threading.Thread(target=touch, name="pi-lock-refresh", daemon=True).start()
    return released


def write_json_atomic(path: str, data: Any, mode: int | None = None) -> None:
    """Write ``data`` as indented JSON through a temporary file and an atomic rename. The file
    keeps its permissions (a new one is 0600) unless ``mode`` is given."""
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    if mode is None:
        with contextlib.suppress(OSError):
            mode = os.stat(path).st_mode & 0o777
    import tempfile  # only writers pay for it

    fd, tmp = tempfile.mkstemp(prefix=".settings-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def update_json_file(
    path: str, change: Callable[[dict[str, Any]], None], mode: int | None = None
) -> dict[str, Any]:
    """Re-read the JSON object in ``path`` under its lock, let ``change`` edit it in place, write it
    atomically; returns the new content. A file that is not a valid JSON object is left alone
    (``ValueError``) rather than lost; a missing one starts empty."""
    with file_lock(path):
        data, error = read_json_object(path)
        if error:
            raise ValueError(f"{error}; not overwriting it")
        change(data)
        write_json_atomic(path, data, mode)
        return data
