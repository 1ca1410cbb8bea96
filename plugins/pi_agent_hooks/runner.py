"""Running hook commands: ``/bin/sh -c <command>`` in the project folder with the event as JSON on
stdin, ``CLAUDE_PROJECT_DIR`` set, each with its timeout; the matching hooks of one event run at
the same time (as in Claude Code and Codex). A hook that times out is killed with its process
group and counts as a failure that does not block."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from dataclasses import dataclass
from typing import Any

from pi_agent_hooks.config import Hook

MAX_OUTPUT = 1 << 20


@dataclass
class Outcome:
    hook: Hook
    code: int | None
    """The exit code; None when the hook timed out or could not start (see ``error``)."""
    stdout: str = ""
    stderr: str = ""
    error: str | None = None

    @property
    def json(self) -> dict[str, Any] | None:
        """The hook's JSON answer (exit 0 and stdout is a JSON object), else None."""
        text = self.stdout.strip()
        if self.code != 0 or not text.startswith("{"):
            return None
        try:
            data = json.loads(text)
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    @property
    def plain(self) -> str:
        """stdout when it is not JSON (exit 0): context for UserPromptSubmit and SessionStart."""
        return "" if self.code != 0 or self.json is not None else self.stdout.strip()

    def failure(self) -> str | None:
        """One line for a failure that does not block (exit code other than 0 and 2, timeout)."""
        if self.error is not None:
            return f"hook {_short(self.hook.command)} ({self.hook.source}): {self.error}"
        if self.code not in (0, 2):
            first = (self.stderr.strip().splitlines() or [""])[0]
            return f"hook {_short(self.hook.command)} exited with code {self.code}" + (
                f": {first}" if first else ""
            )
        return None


def _short(command: str) -> str:
    command = " ".join(command.split())
    return repr(command if len(command) <= 60 else command[:57] + "...")


async def run_one(hook: Hook, payload: dict[str, Any], cwd: str, env: dict[str, str]) -> Outcome:
    try:
        process = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            hook.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd if os.path.isdir(cwd) else None,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        return Outcome(hook, None, error=f"could not start: {exc}")
    try:
        out, err = await asyncio.wait_for(process.communicate(json.dumps(payload).encode()), hook.timeout)
    except TimeoutError:
        _kill(process)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(process.wait(), 2)
        return Outcome(hook, None, error=f"timed out after {hook.timeout:g} s (killed)")
    except BaseException:
        _kill(process)
        raise
    return Outcome(
        hook,
        process.returncode,
        out[:MAX_OUTPUT].decode(errors="replace"),
        err[:MAX_OUTPUT].decode(errors="replace"),
    )


def _kill(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(OSError):
        os.killpg(process.pid, signal.SIGKILL)


async def run_all(hooks: list[Hook], payload: dict[str, Any], cwd: str) -> list[Outcome]:
    if not hooks:
        return []
    env = dict(os.environ, CLAUDE_PROJECT_DIR=cwd)
    return list(await asyncio.gather(*(run_one(hook, payload, cwd, env) for hook in hooks)))
