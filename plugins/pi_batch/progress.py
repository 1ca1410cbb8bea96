"""Progress on stderr: one redrawn line on a terminal (a bar, tasks done / failed / running, cost
so far, ETA), JSON lines otherwise (``batch_start``, one ``progress`` per finished task,
``batch_end``)."""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any, TextIO


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    seconds = int(seconds + 0.5)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    def __init__(self, total: int, skipped: int = 0, stream: TextIO | None = None, style: str = "auto"):
        self.stream = stream or sys.stderr
        if style == "auto":
            isatty = getattr(self.stream, "isatty", None)
            style = "bar" if isatty is not None and isatty() else "json"
        self.style = style
        self.total = total
        self.skipped = skipped
        self.ok = 0
        self.failed = 0
        self.cancelled = 0
        self.running: dict[str, float] = {}
        self.cost_done = 0.0
        self.began = time.monotonic()
        self._lock = threading.Lock()
        self._drawn = 0.0
        self._emit({"type": "batch_start", "total": total, "skipped": skipped})

    # --- state -------------------------------------------------------------------------------

    @property
    def finished(self) -> int:
        return self.ok + self.failed + self.cancelled

    @property
    def cost(self) -> float:
        return self.cost_done + sum(self.running.values())

    def eta(self) -> float | None:
        done = self.finished
        if not done:
            return None
        left = self.total - done
        return (time.monotonic() - self.began) / done * left

    def started(self, task_id: str) -> None:
        with self._lock:
            self.running[task_id] = 0.0
        self._draw()

    def cost_update(self, task_id: str, cost: float) -> None:
        with self._lock:
            if task_id in self.running:
                self.running[task_id] = cost
        self._draw(throttle=True)

    def finished_task(self, record: dict[str, Any]) -> None:
        with self._lock:
            self.running.pop(record["id"], None)
            status = record.get("status")
            if status == "ok":
                self.ok += 1
            elif status == "cancelled":
                self.cancelled += 1
            else:
                self.failed += 1
            self.cost_done += float(record.get("cost") or 0.0)
        if self.style == "json":
            self._emit({"type": "progress", **self.snapshot(), "task": record["id"], "status": status})
        else:
            self._draw()

    def snapshot(self) -> dict[str, Any]:
        eta = self.eta()
        return {
            "total": self.total,
            "done": self.ok,
            "failed": self.failed,
            "cancelled": self.cancelled,
            "running": len(self.running),
            "cost": round(self.cost, 6),
            "elapsed": round(time.monotonic() - self.began, 3),
            "eta": None if eta is None else round(eta, 1),
        }

    def close(self, interrupted: bool = False) -> None:
        if self.style == "bar":
            self._draw()
            self._write("\n")
        self._emit({"type": "batch_end", **self.snapshot(), "interrupted": interrupted})

    # --- drawing -----------------------------------------------------------------------------

    def line(self, width: int = 80) -> str:
        """The terminal line: ``[####------] 12/20 ✓10 ✗2 ▶4 $0.0123 ETA 0:42``."""
        snap = self.snapshot()
        tail = (
            f" {self.finished}/{self.total} done {snap['done']} failed {snap['failed']}"
            f" running {snap['running']} ${snap['cost']:.4f} ETA {_clock(snap['eta'])}"
        )
        if snap["cancelled"]:
            tail += f" cancelled {snap['cancelled']}"
        bar_width = max(10, min(30, width - len(tail) - 3))
        filled = int(bar_width * self.finished / self.total) if self.total else bar_width
        return ("[" + "#" * filled + "-" * (bar_width - filled) + "]" + tail)[: max(width - 1, 20)]

    def _draw(self, throttle: bool = False) -> None:
        if self.style != "bar":
            return
        now = time.monotonic()
        if throttle and now - self._drawn < 0.1:
            return
        self._drawn = now
        try:
            import shutil

            width = shutil.get_terminal_size((80, 24)).columns
        except OSError:
            width = 80
        self._write("\r" + self.line(width) + "\x1b[K")

    def _emit(self, record: dict[str, Any]) -> None:
        if self.style == "json":
            self._write(json.dumps(record) + "\n")

    def _write(self, text: str) -> None:
        with self._lock:
            try:
                self.stream.write(text)
                self.stream.flush()
            except (OSError, ValueError):
                pass
