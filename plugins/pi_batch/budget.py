"""The batch-wide cost cap (``--batch-max-cost``): one pool of dollars for every task.

A task starts only while the pool has money left, and its ``pi`` gets ``--max-cost`` = its share
(what is left, split over the tasks that may still run at once), so the tasks running together
can never spend more than the pool: each refuses, before the request, a call that would cross
its share. A task's unspent share goes back to the pool when it ends. Thread-safe (the local
executor's threads)."""

from __future__ import annotations

import threading


class CostPool:
    def __init__(self, cap: float) -> None:
        self.cap = cap
        self.spent = 0.0
        self._reserved: dict[str, float] = {}
        self._lock = threading.Lock()

    def reserve(self, task_id: str, slots: int) -> float | None:
        """The share for ``task_id`` (None: the pool is spent, the task must not start)."""
        with self._lock:
            left = self.cap - self.spent - sum(self._reserved.values())
            if left <= 1e-12:
                return None
            share = left / max(1, slots)
            self._reserved[task_id] = share
            return share

    def release(self, task_id: str, cost: float) -> None:
        with self._lock:
            self._reserved.pop(task_id, None)
            self.spent += max(0.0, cost)
