"""A shell command the *user* runs (``!cmd`` in the terminal, RPC ``bash``): offered to the
``user_bash`` plugins first, run on this machine otherwise, and stored as pi's ``bashExecution``
message, which the model sees with the next prompt (unless ``excludeFromContext``)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pi_host.lib.toolkit.local_shell import LocalShell, command_environment
from pi_host.lib.toolkit.truncate import truncate_tail

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
        data: dict[str, Any] = {
            "output": self.output,
            "exitCode": self.exit_code,
            "cancelled": self.cancelled,
            "truncated": self.truncated,
        }
        if self.full_output_path:
            data["fullOutputPath"] = self.full_output_path
        return data


def _environment(session: Any) -> dict[str, str]:
    """A user's command is not the agent's: none of the session's ``PI_*`` variables."""
    settings = session.config.settings if isinstance(session.config.settings, dict) else {}
    keys = tuple(getattr(session.tool_context, "provider_key_variables", ()) or ())
    return command_environment(settings.get("shellScrubProviderKeys") is True, keys)


def _keep_full_output(data: bytes) -> str:
    """The whole output in a private temporary file (the message keeps only the tail)."""
    fd, path = tempfile.mkstemp(prefix="pi-bash-", suffix=".log")
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    return path


async def run_user_bash(
    session: Any,
    command: str,
    exclude_from_context: bool = False,
    on_data: Callable[[bytes], Any] | None = None,
    signal: Any = None,
) -> UserBashResult:
    """Run ``command`` for the user and store its ``bashExecution`` message in ``session``.

    Raises :class:`UserBashBlocked` when a ``user_bash`` handler refuses the command."""
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
        chunks: list[bytes] = []

        def collect(chunk: bytes) -> None:
            chunks.append(chunk)
            if on_data is not None:
                on_data(chunk)

        ran = await shell.exec(command, cwd=cwd, env=_environment(session), on_data=collect, signal=signal)
        data = b"".join(chunks)
        cut = truncate_tail(data.decode("utf-8", errors="replace"))
        result = UserBashResult(
            cut.content,
            ran.exit_code if isinstance(ran.exit_code, int) else None,
            bool(getattr(ran, "aborted", False)),
            cut.truncated,
            _keep_full_output(data) if cut.truncated else None,
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
