"""A shell command the *user* runs (``!cmd`` in the terminal, RPC ``bash``): offered to the
``user_bash`` plugins first, run on this machine otherwise, and stored as pi's ``bashExecution``
message, which the model sees with the next prompt (unless ``excludeFromContext``).

The output is kept in bounded memory (its tail, and the whole in a temp file capped at
``shellOutputLogMaxBytes``) and ``on_data`` gets it coalesced, at most ten updates a second
(``user_output.py``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pi_host.lib.toolkit.local_shell import LocalShell, command_environment
from pi_host.lib.toolkit.user_output import OutputTail, UpdateCoalescer, log_cap

__all__ = ["UserBashBlocked", "UserBashResult", "run_user_bash"]


class UserBashBlocked(Exception):
    """A ``user_bash`` handler raised: the command does not run."""


@dataclass
class UserBashResult:
    output: str
    exit_code: int | None
    cancelled: bool
    truncated: bool
    full_output_path: str | None = None

    def to_json(self) -> dict[str, Any]:
        """pi's ``BashResult`` fields."""
        data: dict[str, Any] = {"output": self.output}
        if self.exit_code is not None:  # pi's exitCode is undefined for a cancelled command
            data["exitCode"] = self.exit_code
        data.update(cancelled=self.cancelled, truncated=self.truncated)
        if self.full_output_path:
            data["fullOutputPath"] = self.full_output_path
        return data


def _environment(session: Any) -> dict[str, str]:
    """A user's command is not the agent's: none of the session's ``PI_*`` variables."""
    settings = session.config.settings if isinstance(session.config.settings, dict) else {}
    keys = tuple(getattr(session.tool_context, "provider_key_variables", ()) or ())
    return command_environment(settings.get("shellScrubProviderKeys") is True, keys)


async def run_user_bash(
    session: Any,
    command: str,
    exclude_from_context: bool = False,
    on_data: Callable[[bytes], Any] | None = None,
    signal: Any = None,
) -> UserBashResult:
    """Run ``command`` for the user and store its ``bashExecution`` message in ``session``.

    ``on_data`` gets the output live, coalesced: at most ten calls a second, each ending on a
    character boundary and holding at most 256 KiB (a faster command's updates skip to its
    newest output, after a ``[... N skipped ...]`` line). Raises :class:`UserBashBlocked` when a
    ``user_bash`` handler refuses the command."""
    from pi_host.protocol.messages import BashExecutionMessage

    cwd = session.config.cwd
    event = {"command": command, "excludeFromContext": exclude_from_context, "cwd": cwd}
    try:
        decision = await session.host.dispatch("user_bash", event, session.ctx)
    except Exception as exc:
        raise UserBashBlocked(str(exc)) from exc
    decision = decision if isinstance(decision, dict) else {}
    if isinstance(decision.get("result"), dict):
        found = decision["result"]
        code = found.get("exitCode")
        result = UserBashResult(
            str(found.get("output", "")),
            code if isinstance(code, int) else None,
            bool(found.get("cancelled")),
            bool(found.get("truncated")),
        )
    else:
        shell = decision.get("operations") or LocalShell()
        tail = OutputTail(max_log_bytes=log_cap(session.config.settings))
        updates = UpdateCoalescer(on_data) if on_data is not None else None

        def collect(chunk: bytes) -> None:
            tail.add(chunk)
            if updates is not None:
                updates.add(chunk)

        try:
            ran = await shell.exec(
                command, cwd=cwd, env=_environment(session), on_data=collect, signal=signal
            )
        finally:
            tail.close()
            if updates is not None:
                updates.close()
        cut = tail.truncation()
        result = UserBashResult(
            cut.content,
            # a cancelled command has no exit code (pi): the signal's 137 is not the command's
            ran.exit_code if isinstance(ran.exit_code, int) and not getattr(ran, "aborted", False) else None,
            bool(getattr(ran, "aborted", False)),
            cut.truncated,
            tail.full_output_path if cut.truncated else None,
        )
    message = BashExecutionMessage(
        command=command,
        output=result.output,
        exit_code=result.exit_code,
        cancelled=result.cancelled,
        truncated=result.truncated,
        full_output_path=result.full_output_path,
        exclude_from_context=True if exclude_from_context else None,
    )
    await session.add_message(message)
    return result
