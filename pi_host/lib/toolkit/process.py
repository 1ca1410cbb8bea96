"""``ctx.exec``: a program run without a shell, ended on a timeout or an abort signal."""

from __future__ import annotations

import asyncio
import os
import signal as signals
from typing import Any

from pi_host.protocol.abort import AbortSignal

KILL_GRACE_S = 5.0
"""A command that ignores SIGTERM gets SIGKILL this long after it (as pi)."""


async def run_command(
    command: str,
    args: list[str],
    timeout: float | None,
    signal: AbortSignal | None,
    cwd: str,
    env: dict[str, str] | None = None,
    input: str | bytes | None = None,
) -> dict[str, Any]:
    """``{stdout, stderr, code, killed}``; ``env`` adds to (or, with a None value, removes from)
    the environment; ``input`` is written to the program's stdin (else stdin is empty)."""
    from pi_host.lib.toolkit.local_shell import AGENT_MARKERS

    environment = {**os.environ, **AGENT_MARKERS}
    for name, value in (env or {}).items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[str(name)] = str(value)
    data = input.encode("utf-8") if isinstance(input, str) else input
    try:
        process = await asyncio.create_subprocess_exec(
            command,
            *args,
            cwd=cwd,
            stdin=asyncio.subprocess.PIPE if data is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=environment,
            start_new_session=True,
        )
    except OSError as exc:
        return {"stdout": "", "stderr": str(exc), "code": 127, "killed": False}
    killed = False

    def terminate() -> None:
        nonlocal killed
        if process.returncode is not None or killed:
            return
        killed = True
        _signal_group(process.pid, signals.SIGTERM)
        asyncio.get_running_loop().call_later(KILL_GRACE_S, _kill_if_running, process)

    remove = signal.add_listener(terminate) if signal is not None else None
    if signal is not None and signal.aborted:
        terminate()
    timer = asyncio.get_running_loop().call_later(timeout, terminate) if timeout else None
    try:
        try:
            out, err = await process.communicate(data)
        except (BrokenPipeError, ConnectionResetError):  # it exited without reading its input
            out, err = await process.communicate()
    finally:
        if timer is not None:
            timer.cancel()
        if remove is not None:
            remove()
    code = process.returncode if process.returncode is not None else 1
    if code < 0:
        code = 128 - code
    return {
        "stdout": out.decode("utf-8", "replace"),
        "stderr": err.decode("utf-8", "replace"),
        "code": code,
        "killed": killed,
    }


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_if_running(process: Any) -> None:
    if process.returncode is None:
        _signal_group(process.pid, signals.SIGKILL)
