"""Per-file serialisation for tools that change files (``edit``, ``write``).

With parallel tool execution two edits of one file would otherwise both read the old text and
the second write would undo the first. :func:`file_mutation_lock` queues them per canonical path;
``asyncio.Lock`` is first-in first-out, and tools take the lock before their first ``await``, so
calls run in the order the model issued them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

_locks: dict[tuple[int, str], tuple[asyncio.Lock, int]] = {}


@asynccontextmanager
async def file_mutation_lock(key: str) -> AsyncIterator[None]:
    """Hold the mutation lock of ``key`` (a canonical path, see ``FileSystem.lock_key``)."""
    # Locks belong to one event loop; tests and embedders may run several loops in turn.
    slot = (id(asyncio.get_running_loop()), key)
    lock, users = _locks.get(slot, (None, 0))
    if lock is None:
        lock = asyncio.Lock()
    _locks[slot] = (lock, users + 1)
    try:
        async with lock:
            yield
    finally:
        lock, users = _locks[slot]
        if users <= 1:
            del _locks[slot]
        else:
            _locks[slot] = (lock, users - 1)
