"""Shared helpers for the tool tests: run a tool the way the loop does."""

from __future__ import annotations

import asyncio
from typing import Any

from pi_host.loop.tools import ToolContext, ToolResult
from pi_host.protocol.abort import AbortController, AbortSignal


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
