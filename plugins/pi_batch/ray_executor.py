"""The Ray executor (``--executor ray``, extra ``pi-host[ray]``): each task a Ray remote task
(``--ray-cpus`` CPUs, no retries) running :func:`pi_batch.ray_worker.run_on_worker`; at most
``jobs`` in flight, results taken as they finish with ``ray.wait``. Ray runs locally, started on
demand (``num_cpus`` = jobs × CPUs a task), or on the cluster at ``--ray-address``. Only this module
imports ray, and only when the executor is chosen."""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from typing import Any

from pi_batch.runner import GRACE_S, Limits, TaskPaths


class RayUnavailable(RuntimeError):
    pass


class RayExecutor:
    name = "ray"

    def __init__(
        self,
        jobs: int,
        limits: Limits,
        out_dir: str,
        address: str | None = None,
        cpus: float = 1.0,
        temp_dir: str | None = None,
    ) -> None:
        try:
            import ray
        except ImportError as exc:
            raise RayUnavailable(f"the ray executor needs Ray: pip install 'pi-host[ray]' ({exc})") from None
        self.ray = ray
        self.jobs = jobs
        self.limits = limits
        self.out_dir = out_dir
        self.address = address
        self.cpus = cpus
        self.temp_dir = temp_dir

    def _init(self) -> None:
        ray = self.ray
        if ray.is_initialized():
            return
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if self.address:
            options["address"] = self.address
        else:
            options["num_cpus"] = max(1, int(self.jobs * self.cpus + 0.999))
            if self.temp_dir:
                options["_temp_dir"] = os.path.abspath(self.temp_dir)
        try:
            ray.init(**options)
        except Exception as exc:
            raise RayUnavailable(f"could not start or reach Ray: {type(exc).__name__}: {exc}") from None

    def run(self, tasks, hooks: Any, stop: threading.Event) -> None:
        from pi_batch.ray_worker import run_on_worker

        ray = self.ray
        self._init()
        hooks.install_signals()  # after ray.init, which installs handlers of its own
        remote = ray.remote(num_cpus=self.cpus, max_retries=0)(run_on_worker)
        limits = dataclasses.asdict(self.limits)
        pending = list(reversed(tasks))
        running: dict[Any, Any] = {}
        try:
            while pending or running:
                while pending and len(running) < self.jobs and not stop.is_set():
                    task = pending.pop()
                    hooks.started(task)
                    running[remote.remote(task.to_dict(), limits)] = task
                if stop.is_set():
                    self._cancel(running, hooks)
                    return
                if not running:
                    break
                ready, _ = ray.wait(list(running), num_returns=1, timeout=0.2)
                for ref in ready:
                    task = running.pop(ref)
                    hooks.finished(task, self._collect(task, ref))
        finally:
            if not self.address:
                ray.shutdown()

    def _collect(self, task, ref) -> dict[str, Any]:
        try:
            result = self.ray.get(ref)
        except Exception as exc:  # the worker died, the task could not be scheduled...
            return {"id": task.id, "status": "error", "error": f"ray: {type(exc).__name__}: {exc}"}
        record = result["record"]
        paths = TaskPaths.under(self.out_dir, task.id)
        record["session"] = None
        try:
            _write(paths.events, result["events"])
            _write(paths.log, result["log"])
            if result.get("session_name"):
                record["session"] = os.path.join(paths.sessions, result["session_name"])
                _write(record["session"], result["session"])
        except OSError as exc:  # a full disk under --out: the task runs again on --resume
            reason = f"cannot write {exc.filename or paths.events}: {exc.strerror or exc}"
            return {"id": task.id, "status": "cancelled", "error": reason, "stop_batch": reason}
        return record

    def _cancel(self, running: dict[Any, Any], hooks: Any) -> None:
        """Cancel what runs (the worker's KeyboardInterrupt ends the pi process group) and record
        each task ``cancelled``, unless it finished meanwhile."""
        for ref in running:
            self.ray.cancel(ref)
        deadline = time.monotonic() + GRACE_S + 2
        while running and time.monotonic() < deadline:
            ready, _ = self.ray.wait(list(running), num_returns=len(running), timeout=0.2)
            for ref in ready:
                task = running.pop(ref)
                record = self._collect(task, ref)
                if record.get("status") == "error" and "ray:" in str(record.get("error")):
                    record = {"id": task.id, "status": "cancelled", "error": "cancelled"}
                hooks.finished(task, record)
        for task in running.values():
            hooks.finished(task, {"id": task.id, "status": "cancelled", "error": "cancelled"})


def _write(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)
