"""What a Ray worker runs for one task (imported there by reference; needs only pi-host): the task
in a temporary folder, and back to the driver its record with the event stream, the stderr log
and the session file, which the driver writes under ``--out``. Does not import ray."""

from __future__ import annotations

import os
import socket
import tempfile
from typing import Any

from pi_batch.runner import Limits, TaskPaths, run_task
from pi_batch.tasks import Task


def _read(path: str | None) -> bytes:
    if not path:
        return b""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def run_on_worker(task_data: dict[str, Any], limits_data: dict[str, Any]) -> dict[str, Any]:
    task = Task.from_dict(task_data)
    with tempfile.TemporaryDirectory(prefix="pi-batch-") as root:
        paths = TaskPaths.under(root, task.id)
        record = run_task(task, paths, Limits(**limits_data))
        session = record.get("session")
        record["worker"] = socket.gethostname()
        return {
            "record": record,
            "events": _read(paths.events),
            "log": _read(paths.log),
            "session_name": os.path.basename(session) if session else None,
            "session": _read(session),
        }
