"""Shared helpers for the tool tests: run a tool the way the loop does, or the real ``pi`` with
the scripted faux model (``pi_cli``)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from typing import Any

from pi_host.loop.tools import ToolContext, ToolResult
from pi_host.protocol.abort import AbortController, AbortSignal
from tests.support.pi import run_pi

FAUX = ("--model", "faux/faux-1", "--no-session")
"""The arguments of a run on the scripted faux model without a session file."""


def text_of(result: ToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def run(
    tool: Any,
    args: dict[str, Any],
    cwd: str,
    *,
    signal: AbortSignal | None = None,
    on_update: Any = None,
    **ctx: Any,
) -> ToolResult:
    args = tool.prepare_arguments(args)
    return await tool.execute(
        "call_1", args, signal or AbortController().signal, on_update, ToolContext(cwd=cwd, **ctx)
    )


async def run_error(tool: Any, args: dict[str, Any], cwd: str, **kwargs: Any) -> str:
    """The message of the error the tool raises (fails the test when it does not raise)."""
    try:
        result = await run(tool, args, cwd, **kwargs)
    except Exception as exc:  # tools raise ToolError (or any exception) for errors
        return str(exc)
    raise AssertionError(f"expected an error, got {text_of(result)!r}")


def gather(*coros: Any) -> Any:
    return asyncio.gather(*coros)


def pi_cli(
    *args: str,
    script: list[dict[str, Any]],
    cwd: str,
    env: dict[str, str] | None = None,
    timeout: float = 20,
) -> tuple[subprocess.CompletedProcess[str], float]:
    """``run_pi`` on the scripted faux model without a session file; returns the finished
    process and its wall time in seconds (the tests about tools that must not hang check it)."""
    started = time.monotonic()
    done = run_pi(*FAUX, *args, script=script, cwd=cwd, env=env, timeout=timeout)
    return done, time.monotonic() - started


def tool_ends(stdout: str) -> list[dict[str, Any]]:
    """The ``tool_execution_end`` events of a ``--mode json`` run, in order."""
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return [event for event in events if event.get("type") == "tool_execution_end"]


def end_text(event: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in event["result"]["content"])
