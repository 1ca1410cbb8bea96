"""The ``bash`` tool (reference §5.5): process-group execution, streaming, tail truncation."""

from __future__ import annotations

import inspect
import math
import os
import time
from typing import Any

from pi_host.config.settings import get_or_default
from pi_host.lib.toolkit import LocalShell, Shell, agent_dir, command_environment, setting
from pi_host.loop.tools import OnUpdate, Tool, ToolContext, ToolError, ToolResult
from pi_host.protocol import TextContent
from pi_host.protocol.abort import AbortSignal
from pi_tool_bash.output import OutputCollector

MAX_TIMEOUT_SECONDS = 2147483.647
UPDATE_INTERVAL_SECONDS = 0.1


class BashTool(Tool):
    name = "bash"
    label = "Bash"
    description = (
        "Run a shell command in the working directory. stdout and stderr come back merged; long "
        "output keeps its last 2000 lines or 50KB and the full text is saved to a file named in "
        "the result. Optional timeout in seconds."
    )
    parameters = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command line to run"},
            "timeout": {
                "type": "number",
                "description": "Seconds before the command is killed (no limit by default)",
            },
        },
        "required": ["command"],
    }
    prompt_snippet = "Run shell commands (ls, grep, tests, builds, git...)"
    prompt_guidelines = ["Prefer read/edit/write over shell commands such as cat or sed for file changes."]
    constrained_sampling = {"type": "json_schema", "strict": "prefer"}
    default_active = True
    capability = "exec"

    def __init__(self, shell: Shell | None = None) -> None:
        self.shell: Shell = shell or LocalShell()

    async def execute(
        self,
        tool_call_id: str,
        args: dict[str, Any],
        signal: AbortSignal,
        on_update: OnUpdate | None,
        ctx: ToolContext,
    ) -> ToolResult:
        command = str(args["command"])
        timeout = _check_timeout(args.get("timeout"))
        prefix = setting(ctx.settings, "shellCommandPrefix")
        if isinstance(prefix, str) and prefix:
            command = f"{prefix}\n{command}"
        shell_path = setting(ctx.settings, "shellPath")
        shell_path = str(shell_path) if shell_path else None
        env = build_env(ctx)
        collector = OutputCollector(max_log_bytes=log_cap(ctx.settings))
        last_update = [0.0]

        async def send_update() -> None:
            if on_update is None:
                return
            text, details = collector.display()
            partial = ToolResult(content=[TextContent(text=text)], details=details)
            outcome = on_update(partial)
            if inspect.isawaitable(outcome):
                await outcome

        def on_data(chunk: bytes) -> Any:
            collector.add(chunk)
            now = time.monotonic()
            if on_update is not None and now - last_update[0] >= UPDATE_INTERVAL_SECONDS:
                last_update[0] = now
                return send_update()
            return None

        if on_update is not None:
            first = on_update(ToolResult(content=[TextContent(text="")]))
            if inspect.isawaitable(first):
                await first
        signal.throw_if_aborted()
        started = time.monotonic()
        try:
            result = await self.shell.exec(
                command,
                cwd=ctx.cwd,
                env=env,
                on_data=on_data,
                signal=signal,
                timeout=timeout,
                shell=shell_path,
            )
        except FileNotFoundError as exc:
            raise ToolError(str(exc) if not exc.filename else f"Cannot run the shell: {exc}") from None
        finally:
            collector.close()
        wall = time.monotonic() - started
        text, details = collector.display(_left_open_notice(result.output_left_open))
        shown = "" if collector.total_bytes == 0 else text
        if result.aborted:
            raise ToolError(_join(shown, "Command aborted"))
        if result.timed_out:
            line = f"Command timed out after {_seconds(timeout)} seconds"
            if result.shell_exited_after is not None and result.exit_code is not None:
                line += (
                    f" (the shell had exited with code {result.exit_code} after "
                    f"{result.shell_exited_after:.1f} seconds; background processes kept it running)"
                )
            raise ToolError(_join(shown, line))
        output, cut = collector.structured_output()
        structured: dict[str, Any] = {
            "output": output,
            "truncated": cut or details is not None,
            "exit_code": result.exit_code,
            "wall_time_seconds": round(wall, 3),
        }
        if collector.full_output_path:
            structured["full_output_path"] = collector.full_output_path
        if collector.log_capped:
            structured["full_output_capped"] = True
        code = result.exit_code
        if code != 0:
            return ToolResult(
                content=[TextContent(text=_join(shown, f"Command exited with code {code}"))],
                details=details,
                structured_content=structured,
                is_error=True,
            )
        return ToolResult(content=[TextContent(text=text)], details=details, structured_content=structured)


def _left_open_notice(pids: list[int] | None) -> list[str]:
    if pids is None:
        return []
    who = f" (pid {', '.join(map(str, pids))})" if pids else ""
    return [
        f"The shell exited but a process that left its process group{who} kept the output open, "
        "so reading stopped; it is still running. Redirect a detached process's output "
        "(> file 2>&1) to return at once"
    ]


def log_cap(settings: Any) -> int:
    """``shellOutputLogMaxBytes`` (0: no cap); a value that is not a byte count gives the default."""
    settings = settings if isinstance(settings, dict) else {}
    value = get_or_default(settings, "shellOutputLogMaxBytes")
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        value = get_or_default({}, "shellOutputLogMaxBytes")
    return int(value)


def _join(output: str, status: str) -> str:
    output = output.rstrip("\n")
    return f"{output}\n\n{status}" if output else status


def _seconds(value: float | None) -> str:
    if value is None:
        return "?"
    return str(int(value)) if float(value).is_integer() else str(value)


def _check_timeout(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolError(f"Invalid timeout {value!r}: give a number of seconds")
    if not math.isfinite(value) or value <= 0 or value > MAX_TIMEOUT_SECONDS:
        raise ToolError(
            f"Invalid timeout {value}: it must be more than 0 and at most {MAX_TIMEOUT_SECONDS} seconds"
        )
    return float(value)


def build_env(ctx: ToolContext) -> dict[str, str]:
    """The process environment with ``<agent dir>/bin`` first on PATH and the session's
    ``PI_*`` variables (inherited values are dropped so a nested pi does not leak its own).

    As in pi the providers' key variables are inherited, so a command that prints the environment
    puts them in the session; ``shellScrubProviderKeys: true`` removes them."""
    settings = ctx.settings if isinstance(ctx.settings, dict) else {}
    scrub = get_or_default(settings, "shellScrubProviderKeys") is True
    env = command_environment(scrub, tuple(ctx.provider_key_variables))
    bin_dir = os.path.join(agent_dir(ctx), "bin")
    env["PATH"] = bin_dir + (os.pathsep + env["PATH"] if env.get("PATH") else "")
    values = {
        "PI_SESSION_ID": ctx.session_id,
        "PI_SESSION_FILE": ctx.session_file,
        "PI_PROVIDER": ctx.provider,
        "PI_MODEL": ctx.model,
        "PI_REASONING_LEVEL": ctx.thinking_level,
    }
    for name, value in values.items():
        if value:
            env[name] = str(value)
    return env
