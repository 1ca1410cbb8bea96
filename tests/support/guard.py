"""The tier rule, enforced: outside ``tests/e2e/`` a test may not start ``pi`` (or any Python
interpreter), Node, npm or tmux. Those starts cost a few hundred milliseconds each and belong to
the end-to-end tier; the inner loop (``pytest -m "not e2e"``) stays in process.

Programs that the code under test runs as part of its job (``bash`` for the bash tool, ``git``,
``rg``, an editor script) are allowed anywhere. Every child process of the test process goes
through ``subprocess.Popen._execute_child`` (``asyncio`` subprocesses included), which is where
the guard looks; a start is recorded, not refused, so the code under test behaves as it would,
and the test fails at the end of its phase naming what it started.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

FORBIDDEN = {"pi", "pi-host", "node", "npm", "npx", "tmux", "nodejs"}


def forbidden(argv: list[str]) -> bool:
    """True when ``argv`` starts a program reserved for the e2e tier."""
    if not argv:
        return False
    program = os.path.basename(str(argv[0]))
    if os.path.realpath(str(argv[0])) == os.path.realpath(sys.executable):
        return True
    return program in FORBIDDEN or program.startswith("python")


class ProcessGuard:
    """Records the reserved programs started while :meth:`watching` is active."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._started: list[list[str]] | None = None
        self._original = subprocess.Popen._execute_child

        guard = self

        def execute_child(popen, args, executable, *rest, **kwargs):  # noqa: ANN001 (Popen's signature)
            argv = [args] if isinstance(args, str | bytes | os.PathLike) else list(args)
            if executable is not None:
                argv = [executable, *argv[1:]]
            with guard._lock:
                if guard._started is not None and forbidden([os.fsdecode(a) for a in argv[:1]]):
                    guard._started.append([os.fsdecode(a) for a in argv[:4]])
            return guard._original(popen, args, executable, *rest, **kwargs)

        subprocess.Popen._execute_child = execute_child  # type: ignore[method-assign]

    @contextmanager
    def watching(self) -> Iterator[list[list[str]]]:
        started: list[list[str]] = []
        with self._lock:
            self._started = started
        try:
            yield started
        finally:
            with self._lock:
                self._started = None

    @staticmethod
    def fail(item: pytest.Item, started: list[list[str]]) -> None:
        shown = "; ".join(" ".join(argv).replace("\n", " ")[:100] for argv in started[:3])
        more = f" (and {len(started) - 3} more)" if len(started) > 3 else ""
        pytest.fail(
            f"{item.nodeid} started {shown}{more} outside tests/e2e/: a test that starts pi, Python, "
            "Node, npm or tmux belongs in the e2e tier (tests/README.md)",
            pytrace=False,
        )
