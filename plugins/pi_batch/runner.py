"""One task: a fresh work folder, then ``python -m pi_host --mode json`` as a child process in a
process group of its own, its event stream copied to a file and watched for the final answer,
tokens and cost; the timeout, the cost limit and a cancel end the group (SIGTERM: pi aborts the
prompt and saves the session; SIGKILL after a grace period).

Synchronous and self-contained (standard library only), so the same function runs in a thread of
the local executor and inside a Ray task on another machine.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pi_batch.tasks import Task

GRACE_S = 3.0
"""SIGKILL this long after SIGTERM (pi itself gives a stuck run 2 s)."""


@dataclass
class Limits:
    timeout: float | None = None
    max_cost: float | None = None
    batch_cost: float | None = None
    """The batch-wide cap (``--batch-max-cost``): the executor gives each task a share."""


@dataclass
class TaskPaths:
    """Where one task writes: its event stream, its session dir, its stderr log, its work folder
    (used when the task has a ``repo`` or no ``cwd``) and, for ``settings``, an agent dir of its own."""

    events: str
    sessions: str
    log: str
    work: str
    agent: str

    @classmethod
    def under(cls, root: str, task_id: str) -> TaskPaths:
        return cls(
            events=os.path.join(root, "events", f"{task_id}.jsonl"),
            sessions=os.path.join(root, "sessions", task_id),
            log=os.path.join(root, "logs", f"{task_id}.log"),
            work=os.path.join(root, "work", task_id),
            agent=os.path.join(root, "agents", task_id),
        )


class StreamWatch:
    """Folds the JSON event stream: session id, the last answer, tokens and cost so far."""

    TOKEN_KEYS = (("input", "input"), ("output", "output"), ("cacheRead", "cacheRead"))

    def __init__(self) -> None:
        self.session_id: str | None = None
        self.text = ""
        self.stop_reason: str | None = None
        self.error: str | None = None
        self.answers = 0
        self.tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
        self.finished_cost = 0.0
        self.current_cost = 0.0
        self.budget: dict[str, Any] | None = None
        """pi's ``budget_exceeded`` event: the run stopped before a request that would cross."""

    @property
    def cost(self) -> float:
        return self.finished_cost + self.current_cost

    def feed(self, line: bytes) -> None:
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            return
        if not isinstance(event, dict):
            return
        kind = event.get("type")
        if kind == "message_update":
            self.current_cost = _cost(event.get("usage"))
        elif kind == "message_end":
            message = event.get("message") or {}
            if message.get("role") != "assistant":
                return
            usage = message.get("usage") or {}
            self.current_cost = 0.0
            self.finished_cost += _cost(usage)
            for key in ("input", "output", "cacheRead", "cacheWrite"):
                self.tokens[key] += int(usage.get(key) or 0)
            self.tokens["total"] += int(usage.get("totalTokens") or 0)
            self.answers += 1
            self.stop_reason = message.get("stopReason")
            self.error = message.get("errorMessage")
            texts = [
                block.get("text", "")
                for block in message.get("content") or []
                if isinstance(block, dict) and block.get("type") == "text"
            ]
            if texts or self.stop_reason == "stop":
                self.text = "".join(texts)
        elif kind == "session":
            self.session_id = event.get("id")
        elif kind == "budget_exceeded" and "scope" in event:
            self.budget = {k: v for k, v in event.items() if k != "type"}


def _cost(usage: Any) -> float:
    if not isinstance(usage, dict):
        return 0.0
    cost = usage.get("cost")
    if isinstance(cost, dict):
        cost = cost.get("total")
    return float(cost) if isinstance(cost, int | float) else 0.0


# --- the work folder and the environment ----------------------------------------------------------


def _git(*args: str, cwd: str | None = None) -> None:
    done = subprocess.run(
        ["git", *args], cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600
    )
    if done.returncode:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip() or done.returncode}")


def prepare_workspace(task: Task, work: str) -> str:
    """The directory the task runs in: its ``cwd`` as given, else ``work`` made afresh (a copy or
    clone of ``repo`` at ``ref``, or empty)."""
    if task.cwd:
        if not os.path.isdir(task.cwd):
            raise RuntimeError(f"cwd {task.cwd} is not a directory")
        return task.cwd
    if os.path.lexists(work):
        shutil.rmtree(work)
    os.makedirs(os.path.dirname(work), exist_ok=True)
    repo = task.repo
    if not repo:
        os.makedirs(work)
    elif os.path.isdir(repo) and not task.ref:
        shutil.copytree(repo, work, symlinks=True)
    else:
        _git("clone", "--quiet", *(("--no-checkout",) if task.ref else ("--depth", "1")), repo, work)
        if task.ref:
            _git("checkout", "--quiet", task.ref, cwd=work)
    return work


def _deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def child_env(task: Task, agent: str) -> dict[str, str]:
    """The task's environment: this one plus its ``env``; with ``settings``, ``PI_CODING_AGENT_DIR``
    points at ``agent``, a copy of the agent dir (links to its files) whose ``settings.json`` is
    the user's merged with the task's."""
    env = {**os.environ, **task.env}
    if not task.settings:
        return env
    base = env.get("PI_CODING_AGENT_DIR") or os.path.join(os.path.expanduser("~"), ".pi", "agent")
    base = os.path.abspath(os.path.expanduser(base))
    if os.path.lexists(agent):
        shutil.rmtree(agent)
    os.makedirs(agent)
    user: dict[str, Any] = {}
    if os.path.isdir(base):
        for name in os.listdir(base):
            if name not in ("settings.json", "sessions"):
                os.symlink(os.path.join(base, name), os.path.join(agent, name))
        try:
            with open(os.path.join(base, "settings.json"), encoding="utf-8") as handle:
                loaded = json.load(handle)
            user = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError):
            user = {}
    with open(os.path.join(agent, "settings.json"), "w", encoding="utf-8") as handle:
        json.dump(_deep_merge(user, task.settings), handle, indent=2)
    env["PI_CODING_AGENT_DIR"] = agent
    return env


def pi_argv(
    task: Task, session_dir: str, python: str | None = None, max_cost: float | None = None
) -> list[str]:
    argv = [python or sys.executable, "-m", "pi_host", "--mode", "json", "--session-dir", session_dir]
    if max_cost is not None:  # pi refuses a request that would cross it (checked before the call)
        argv += ["--max-cost", repr(max_cost)]
    if task.model:
        argv += ["--model", task.model]
    if task.tools is not None:
        argv += ["--tools", ",".join(task.tools)] if task.tools else ["--no-tools"]
    return [*argv, "--", task.prompt]


# --- the child process ----------------------------------------------------------------------------


def _die_with_parent(batch_pid: int) -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the child gets SIGKILL when the batch dies (a SIGKILLed ``pi batch`` leaves no
    orphan still spending tokens on a task ``--resume`` will run again)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass
    # The batch may have died between the fork and the prctl: then no signal will come.
    if os.getppid() != batch_pid:
        os._exit(137)


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _tail(path: str, limit: int = 600) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - limit))
            return handle.read().decode(errors="replace").strip()
    except OSError:
        return ""


def run_task(
    task: Task,
    paths: TaskPaths,
    limits: Limits,
    cancel: threading.Event | None = None,
    on_cost: Callable[[float], None] | None = None,
    python: str | None = None,
    share: float | None = None,
) -> dict[str, Any]:
    """Run ``task`` to its end; its record (``status`` ok, error, timeout, cost-limit or
    cancelled, with ``session`` the absolute path of its session file, if one was written)."""
    started = time.time()
    clock = time.monotonic()
    watch = StreamWatch()
    record: dict[str, Any] = {"id": task.id, "status": "error", "model": task.model}
    proc: subprocess.Popen[bytes] | None = None
    stopped: str | None = None
    try:
        for path in (paths.events, paths.log):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.isdir(paths.sessions):
            shutil.rmtree(paths.sessions)  # a task run again (resume) starts a new session
        os.makedirs(paths.sessions)
        cwd = prepare_workspace(task, paths.work)
        env = child_env(task, paths.agent)
        with open(paths.events, "wb") as events, open(paths.log, "wb") as log:
            if cancel is not None and cancel.is_set():
                raise _Cancelled
            proc = subprocess.Popen(
                pi_argv(task, paths.sessions, python, _cap(limits.max_cost, share)),
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                start_new_session=True,
                preexec_fn=functools.partial(_die_with_parent, os.getpid())
                if sys.platform.startswith("linux")
                else None,
            )
            stopped = _pump(proc, events, watch, limits, clock, cancel, on_cost)
    except _Cancelled:
        stopped = "cancelled"
    except OSError as exc:
        if exc.errno not in STORAGE_ERRORS:
            record["error"] = f"{type(exc).__name__}: {exc}"
        else:  # not the task's fault: it runs again on --resume, and the batch stops
            stopped = "cancelled"
            record["stop_batch"] = f"cannot write {exc.filename or paths.events}: {exc.strerror or exc}"
    except Exception as exc:
        record["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        if proc is not None and proc.poll() is None:
            _terminate(proc)
    exit_code = proc.returncode if proc is not None else None
    if stopped == "cancelled" and exit_code == 0 and "stop_batch" not in record:
        # the run had ended on its own when the cancel came (a stopped pi exits 130/143): its
        # result stands, and --resume does not run it again
        stopped = None
    if stopped is None and exit_code not in (0, None) and _out_of_space(paths.events):
        # pi itself could not save (its session is under --out): stop as for the batch's own files
        stopped = "cancelled"
        record["stop_batch"] = f"cannot write under {os.path.dirname(paths.sessions)}: no space left"
    if stopped is None and limits.max_cost is not None and watch.cost > limits.max_cost:
        stopped = "cost-limit"
    if stopped:
        status = stopped
        if stopped == "timeout":
            record["error"] = f"timed out after {limits.timeout:g} s"
        elif stopped == "cost-limit":
            record["error"] = f"cost {watch.cost:.4f} over the limit {limits.max_cost:g}"
        else:
            record["error"] = record.get("stop_batch") or "cancelled"
    elif watch.budget is not None:
        stop = watch.budget  # pi stopped itself before a request that would cross the cap
        per_task = limits.max_cost is not None and stop.get("limit") == limits.max_cost
        status = "cost-limit" if per_task else "budget"
        whose = "the task's limit" if per_task else "the batch's share"
        record["error"] = (
            f"{stop.get('budget')} budget reached ({stop.get('spent')} of {stop.get('limit')}, {whose})"
        )
        record["budget"] = stop
    elif "error" in record:
        status = "error"
    elif exit_code != 0:
        status = "error"
        record["error"] = f"pi exited with {exit_code}: {_tail(paths.log)}"
    elif watch.answers == 0:
        status = "error"
        record["error"] = f"no answer: {_tail(paths.log)}"
    elif watch.stop_reason in ("error", "aborted"):
        status = "error"
        record["error"] = watch.error or watch.stop_reason
    else:
        status = "ok"
    record.update(
        status=status,
        text=watch.text,
        tokens=dict(watch.tokens),
        cost=round(watch.cost, 10),
        wall=round(time.monotonic() - clock, 3),
        exit_code=exit_code,
        started=started,
        session=_session_file(paths.sessions, watch.session_id),
    )
    if "error" in record and status == "ok":
        del record["error"]
    return record


def _cap(per_task: float | None, share: float | None) -> float | None:
    given = [value for value in (per_task, share) if value is not None]
    return min(given) if given else None


class _Cancelled(Exception):
    pass


STORAGE_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})
"""Errors of a disk that takes no more: the batch stops (every next task would meet them too)."""


def _out_of_space(path: str) -> bool:
    """Whether the file system holding ``path``'s folder has no block left for us."""
    try:
        stats = os.statvfs(os.path.dirname(path))
    except OSError:
        return False
    return stats.f_bavail == 0


def _pump(proc, events, watch, limits, clock, cancel, on_cost) -> str | None:
    """Copy the child's stdout to ``events`` (folding it into ``watch``) until it ends; the reason
    it was stopped, if it was."""
    fd = proc.stdout.fileno()
    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ)
    pending: list[bytes] = []  # the pieces of an unfinished line (joined once it ends: linear)
    stopped: str | None = None
    last_cost = 0.0
    kill_at = float("inf")
    try:
        while True:
            if stopped is None:
                if cancel is not None and cancel.is_set():
                    stopped = "cancelled"
                elif limits.timeout is not None and time.monotonic() - clock > limits.timeout:
                    stopped = "timeout"
                elif limits.max_cost is not None and watch.cost > limits.max_cost:
                    stopped = "cost-limit"
                if stopped:
                    _signal_group(proc.pid, signal.SIGTERM)
                    kill_at = time.monotonic() + GRACE_S
            elif time.monotonic() > kill_at:
                _signal_group(proc.pid, signal.SIGKILL)
                kill_at = float("inf")
            if not selector.select(0.1):
                if proc.poll() is not None:
                    break  # drained and dead; a grandchild (``setsid cmd &``) may still hold the pipe
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            events.write(chunk)
            *lines, rest = chunk.split(b"\n")
            if lines:
                lines[0] = b"".join([*pending, lines[0]])
                pending = []
                for line in lines:
                    watch.feed(line)
            if rest:
                pending.append(rest)
            if on_cost is not None and watch.cost != last_cost:
                last_cost = watch.cost
                on_cost(last_cost)
    finally:
        selector.close()
        if pending:
            watch.feed(b"".join(pending))
        events.flush()
    try:
        proc.wait(GRACE_S)
    except subprocess.TimeoutExpired:
        pass  # run_task ends it
    return stopped


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    _signal_group(proc.pid, signal.SIGTERM)
    try:
        proc.wait(GRACE_S)
    except subprocess.TimeoutExpired:
        _signal_group(proc.pid, signal.SIGKILL)
        proc.wait()


def _session_file(directory: str, session_id: str | None) -> str | None:
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return None
    names = [name for name in names if name.endswith(".jsonl")]
    if session_id:
        names = [name for name in names if session_id in name] or names
    return os.path.join(directory, names[-1]) if names else None
