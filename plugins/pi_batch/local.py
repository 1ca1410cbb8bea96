"""The local executor: at most ``jobs`` tasks at once, each a ``pi --mode json`` child process run
by :func:`pi_batch.runner.run_task` in a thread of a pool (standard library only)."""

from __future__ import annotations

import threading
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Any

from pi_batch.budget import CostPool
from pi_batch.runner import Limits, TaskPaths, run_task


class LocalExecutor:
    name = "local"

    def __init__(self, jobs: int, limits: Limits, out_dir: str) -> None:
        self.jobs = jobs
        self.limits = limits
        self.out_dir = out_dir

    def run(self, tasks, hooks: Any, stop: threading.Event) -> None:
        cancel = threading.Event()
        pending = deque(tasks)
        running: dict[Any, Any] = {}
        pool_of_cost = CostPool(self.limits.batch_cost) if self.limits.batch_cost is not None else None
        with ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="pi-batch") as pool:
            while pending or running:
                while pending and len(running) < self.jobs and not stop.is_set():
                    task = pending.popleft()
                    share = None
                    if pool_of_cost is not None:
                        share = pool_of_cost.reserve(task.id, min(self.jobs - len(running), len(pending) + 1))
                        if share is None:  # the batch's money is spent: the task never starts
                            hooks.started(task)
                            hooks.finished(task, _not_started(task))
                            continue
                    hooks.started(task)
                    future = pool.submit(
                        run_task,
                        task,
                        TaskPaths.under(self.out_dir, task.id),
                        self.limits,
                        cancel,
                        lambda cost, task_id=task.id: hooks.cost(task_id, cost),
                        None,
                        share,
                    )
                    running[future] = task
                if stop.is_set():
                    cancel.set()  # the running tasks end as ``cancelled``; the rest never start
                    pending.clear()
                if not running:
                    break
                done, _ = wait(running, timeout=0.2, return_when=FIRST_COMPLETED)
                for future in done:
                    task = running.pop(future)
                    try:
                        record = future.result()
                    except Exception as exc:  # run_task reports its own failures; this is a bug
                        record = {"id": task.id, "status": "error", "error": f"{type(exc).__name__}: {exc}"}
                    if pool_of_cost is not None:
                        pool_of_cost.release(task.id, float(record.get("cost") or 0))
                    hooks.finished(task, record)


def _not_started(task: Any) -> dict[str, Any]:
    return {
        "id": task.id,
        "status": "budget",
        "error": "the batch's cost budget is spent (--batch-max-cost)",
        "budget": {"budget": "cost", "scope": "batch"},
        "cost": 0.0,
    }
