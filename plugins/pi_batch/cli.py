"""``pi batch``: options, the tasks file, the lock on ``--out``, ``--resume``, signals, and the
executor's results into ``DIR/results.jsonl`` (a disk that refuses them stops the batch in one
line)."""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import threading
from typing import Any

from pi_batch.lock import OutLocked, lock_out_dir
from pi_batch.progress import Progress
from pi_batch.ray_executor import RayUnavailable  # does not import ray
from pi_batch.results import ResultsLog, finished_ids, read_records
from pi_batch.runner import Limits
from pi_batch.tasks import Task, read_tasks

_URL = re.compile(r"^[a-z][a-z0-9+.-]*://|^[\w.-]+@[\w.-]+:")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pi batch",
        description="Run the tasks of a JSONL file (id, prompt, cwd | repo + ref, model, tools, "
        "settings, env), each its own pi-host session; results in DIR/results.jsonl. docs/batch.md",
    )
    parser.add_argument("tasks", help="the tasks file, one JSON object a line")
    parser.add_argument("--out", required=True, metavar="DIR", help="where results, events and sessions go")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="tasks at once")
    parser.add_argument("--executor", choices=("local", "ray"), default="local")
    parser.add_argument("--ray-address", metavar="ADDR", help="an existing Ray cluster (default: start one)")
    parser.add_argument("--ray-cpus", type=float, default=1.0, metavar="N", help="CPUs a Ray task asks for")
    parser.add_argument("--ray-temp-dir", metavar="DIR", help="temp dir of a Ray started on demand")
    parser.add_argument("--resume", action="store_true", help="skip tasks DIR/results.jsonl has finished")
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="per task; the task ends 'timeout'")
    parser.add_argument(
        "--max-cost",
        type=float,
        metavar="USD",
        help="per task: pi stops before a request that would cross it",
    )
    parser.add_argument(
        "--batch-max-cost",
        type=float,
        metavar="USD",
        help="for the whole batch (local executor); tasks end 'budget'",
    )
    parser.add_argument("--progress", choices=("auto", "bar", "json", "none"), default="auto")
    return parser


def _resolve(task: Task, base: str) -> None:
    """Local paths in a task are relative to the tasks file's folder."""
    if task.cwd:
        task.cwd = os.path.normpath(os.path.join(base, os.path.expanduser(task.cwd)))
    if task.repo and not _URL.match(task.repo):
        candidate = os.path.join(base, os.path.expanduser(task.repo))
        if os.path.exists(candidate):
            task.repo = os.path.normpath(candidate)


class _Quiet(Progress):
    def _write(self, text: str) -> None:
        pass


class Batch:
    """The executor's hooks: results appended as tasks finish, progress kept."""

    def __init__(self, out_dir: str, log: ResultsLog, progress: Progress) -> None:
        self.out_dir = out_dir
        self.log = log
        self.progress = progress
        self.stop = threading.Event()
        self.signal: int | None = None
        self.records: list[dict[str, Any]] = []
        self.failure: str | None = None
        """Why the batch stopped on its own (``--out`` could not be written), in one line."""

    def started(self, task: Task) -> None:
        self.progress.started(task.id)

    def cost(self, task_id: str, cost: float) -> None:
        self.progress.cost_update(task_id, cost)

    def finished(self, task: Task, record: dict[str, Any]) -> None:
        record = {"id": task.id, **record, "line": task.line}
        stop_reason = record.pop("stop_batch", None)
        for key in ("session", "events"):
            if record.get(key):
                record[key] = os.path.relpath(record[key], self.out_dir)
        events = os.path.join(self.out_dir, "events", f"{task.id}.jsonl")
        if os.path.exists(events):
            record["events"] = os.path.relpath(events, self.out_dir)
        if stop_reason:  # the task could not write its files under --out: the next would fail too
            self._fail(str(stop_reason))
        try:
            self.log.append(record)
        except OSError as exc:  # a full disk: what is written stays whole; stop, --resume goes on
            self._fail(f"cannot write {self.log.path}: {exc.strerror or exc}")
        self.records.append(record)
        self.progress.finished_task(record)

    def _fail(self, reason: str) -> None:
        if self.failure is None:
            self.failure = reason
        self.stop.set()  # no task starts any more; the running ones end ``cancelled``

    def install_signals(self) -> None:
        def handler(signum, frame):
            self.signal = signum
            self.stop.set()

        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, handler)


def _say(line: str) -> None:
    print(f"pi batch: {line}", file=sys.stderr, flush=True)


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.jobs < 1:
        _say("-j must be at least 1")
        return 2
    try:
        tasks, problems = read_tasks(args.tasks)
    except OSError as exc:
        _say(f"cannot read {args.tasks}: {exc}")
        return 2
    base = os.path.dirname(os.path.abspath(args.tasks))
    for task in tasks:
        _resolve(task, base)
    for problem in problems:
        _say(problem)
    bad_lines = sum("skipped" in problem for problem in problems)

    out_dir = os.path.abspath(args.out)
    try:
        os.makedirs(out_dir, exist_ok=True)
        lock = lock_out_dir(out_dir)
    except OutLocked as exc:
        _say(str(exc))
        return 2
    except OSError as exc:
        _say(f"cannot use --out {out_dir}: {exc.strerror or exc}")
        return 2
    try:
        return _run(args, tasks, bad_lines, out_dir)
    finally:
        lock.release()


def _run(args: argparse.Namespace, tasks: list[Task], bad_lines: int, out_dir: str) -> int:
    """The batch proper, with ``out_dir`` locked."""
    results = os.path.join(out_dir, "results.jsonl")
    try:
        records, record_problems = read_records(results, repair=args.resume)
    except OSError as exc:
        _say(f"cannot read {results}: {exc.strerror or exc}")
        return 2
    if records and not args.resume:
        _say(f"{results} already holds results: pass --resume to go on, or another --out")
        return 2
    for problem in record_problems:
        _say(problem)
    done = finished_ids(records)
    todo = [task for task in tasks if task.id not in done]
    skipped = len(tasks) - len(todo)
    if skipped:
        _say(f"resuming: {skipped} task(s) already finished, {len(todo)} to run")

    limits = Limits(timeout=args.timeout, max_cost=args.max_cost, batch_cost=args.batch_max_cost)
    jobs = min(args.jobs, max(len(todo), 1))
    if args.executor == "ray":
        from pi_batch.ray_executor import RayExecutor  # it imports ray

        try:
            executor: Any = RayExecutor(
                jobs, limits, out_dir, args.ray_address, args.ray_cpus, args.ray_temp_dir
            )
        except RayUnavailable as exc:
            _say(str(exc))
            return 2
    else:
        from pi_batch.local import LocalExecutor

        executor = LocalExecutor(jobs, limits, out_dir)

    progress_class = _Quiet if args.progress == "none" else Progress
    style = "json" if args.progress == "none" else args.progress
    try:
        log = ResultsLog(results)
    except OSError as exc:
        _say(f"cannot write {results}: {exc.strerror or exc}")
        return 2
    progress = progress_class(len(todo), skipped, sys.stderr, style)
    batch = Batch(out_dir, log, progress)
    batch.install_signals()
    try:
        executor.run(todo, batch, batch.stop)
    except RayUnavailable as exc:  # Ray could not start or be reached
        _say(str(exc))
        return 2
    finally:
        log.close()
        progress.close(interrupted=batch.signal is not None)
    counts: dict[str, int] = {}
    for record in batch.records:
        counts[record.get("status", "?")] = counts.get(record.get("status", "?"), 0) + 1
    summary = ", ".join(f"{count} {status}" for status, count in sorted(counts.items())) or "nothing run"
    _say(f"{summary}; cost ${progress.cost_done:.4f}; results in {results}")
    if batch.failure is not None:
        kept = len(read_records(results)[0])
        _say(f"{batch.failure}; stopped with {kept} result(s) kept: make room, then --resume runs the rest")
        return 1
    if batch.signal is not None:
        return 128 + batch.signal
    return 0 if not bad_lines and all(r.get("status") == "ok" for r in batch.records) else 1
