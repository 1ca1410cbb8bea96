"""Running ``bash``'s commands on this machine (the default :class:`~pi_host.lib.toolkit.Shell`).

The command runs in its own session (process group) and writes stdout and stderr into one pipe
that this module creates and owns, so that it can stop reading and close it whenever it decides,
even while a process that escaped the group still holds the other end. The call ends:

* when the pipe closes (every writer exited), as in pi: background processes of the command that
  keep its output open keep the call running;
* on timeout or abort: the group is SIGKILLed, and so are the processes outside it that hold the
  pipe (found through ``/proc``); after a grace period the pipe is closed regardless;
* when the shell has exited and no process is left in its group, yet the pipe stays open: only
  processes that left the group (``setsid ... &``) hold it. Reading goes on for
  ``escaped_grace_seconds``, then stops; those processes are left running (they were detached on
  purpose) and the result says so.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pi_host.lib.toolkit.operations import ExecResult
from pi_host.lib.toolkit.processes import group_alive, kill_pids, kill_process_group, pipe_holders
from pi_host.protocol.abort import AbortSignal

READ_SIZE = 65536
POLL_SECONDS = 0.2


def default_shell() -> str:
    """``/bin/bash``, else ``bash`` on PATH, else ``sh``."""
    if os.path.exists("/bin/bash"):
        return "/bin/bash"
    import shutil

    return shutil.which("bash") or "sh"


@dataclass
class Launch:
    """How one command starts (what a :attr:`LocalShell.launcher` returns): the program and its
    arguments, a function run in the child before ``exec``, and one run in pi-host once started."""

    argv: list[str]
    preexec_fn: Callable[[], Any] | None = None
    cleanup: Callable[[], Any] | None = None


class LocalShell:
    """Runs commands on this machine, each in its own process group (session)."""

    launcher: Callable[[list[str], str, dict[str, str]], Launch] | None = None
    """A sandbox's hook: ``launcher(argv, cwd, env)`` wraps each command (``argv`` is
    ``[shell, "-c", command]``) and returns the :class:`Launch` to run; what it raises becomes the
    tool's error. Set on one shell instance (the bash tool's), never on the class."""

    kill_grace_seconds = 2.0
    """After a kill, how long to wait for the pipe to close (a process that escaped both the group
    and the ``/proc`` search could hold it open forever)."""
    escaped_grace_seconds = 1.0
    """After the shell and its whole group are gone, how long to keep reading a pipe that
    processes outside the group still hold."""

    async def exec(
        self,
        command: str,
        *,
        cwd: str,
        env: dict[str, str],
        on_data: Callable[[bytes], Any],
        signal: AbortSignal | None = None,
        timeout: float | None = None,
        shell: str | None = None,
    ) -> ExecResult:
        if not os.path.isdir(cwd):
            raise FileNotFoundError(f"Working directory does not exist: {cwd}")
        argv = [shell or default_shell(), "-c", command]
        launch = self.launcher(argv, cwd, env) if self.launcher is not None else Launch(argv)
        read_fd, write_fd = os.pipe()
        try:
            process = await asyncio.create_subprocess_exec(
                *launch.argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                cwd=cwd,
                env=env,
                start_new_session=True,
                preexec_fn=launch.preexec_fn,
            )
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
            if launch.cleanup is not None:
                launch.cleanup()
        run = _Run(self, process, read_fd)
        return await run.wait(on_data, signal, timeout)


class _Run:
    """One command: its process, its pipe, and why it ended."""

    def __init__(self, shell: LocalShell, process: asyncio.subprocess.Process, read_fd: int) -> None:
        self.shell = shell
        self.process = process
        self.read_fd = read_fd
        self.inode = os.fstat(read_fd).st_ino
        self.started = time.monotonic()
        self.exited_at: float | None = None
        self.killed_at: float | None = None
        self.reason: str | None = None  # "timed_out" or "aborted"
        self.escaped_since: float | None = None
        self.left_open: list[int] | None = None
        self.wake = asyncio.Event()
        """Set when something the pump waits for happens: the shell exits, a kill."""

    def kill(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
        self.killed_at = self.killed_at or time.monotonic()
        self.kill_tree()
        self.wake.set()

    def kill_tree(self) -> None:
        """SIGKILL the group and every process holding the output pipe."""
        # A reaped shell's pid may already be someone else's: signal the group only while it exists.
        if self.process.returncode is None or group_alive(self.process.pid):
            kill_process_group(self.process.pid)
        kill_pids(pipe_holders(self.inode))

    async def wait(
        self, on_data: Callable[[bytes], Any], signal: AbortSignal | None, timeout: float | None
    ) -> ExecResult:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(self.read_fd, "rb", buffering=0)
        )
        exited = asyncio.ensure_future(self.process.wait())
        exited.add_done_callback(lambda _: self.wake.set())
        remove = signal.add_listener(lambda: self.kill("aborted")) if signal is not None else (lambda: None)
        timer = loop.call_later(timeout, self.kill, "timed_out") if timeout else None
        try:
            try:
                await self._pump(reader, on_data)
            finally:
                # Closing our end is what lets the call end while an escaped process holds the other.
                transport.close()
            await self._wait_exit(exited)
        except BaseException:
            # on_data failed or the call was cancelled: nothing may outlive it.
            self.kill_tree()
            exited.cancel()
            raise
        finally:
            if timer is not None:
                timer.cancel()
            remove()
        return self._result()

    async def _wait_exit(self, exited: asyncio.Future[int]) -> None:
        """Wait for the shell (it may have closed its output early); the timeout and abort still
        apply, and after a kill only the grace period."""
        while not exited.done():
            self.wake.clear()
            if self.killed_at is not None:
                remaining = self.killed_at + self.shell.kill_grace_seconds - time.monotonic()
                await asyncio.wait({exited}, timeout=max(0.0, remaining))
                if not exited.done():
                    exited.cancel()
                    kill_process_group(self.process.pid)  # not reaped: the pid is still ours
                return
            woken = asyncio.ensure_future(self.wake.wait())
            await asyncio.wait({exited, woken}, return_when=asyncio.FIRST_COMPLETED)
            woken.cancel()

    def _deadline(self, now: float) -> tuple[float | None, float | None]:
        """When to stop reading although the pipe is still open, and when to look again."""
        if self.exited_at is None and self.process.returncode is not None:
            self.exited_at = now
        if self.killed_at is not None:
            return self.killed_at + self.shell.kill_grace_seconds, None
        if self.exited_at is None:
            return None, None
        if self.escaped_since is None:
            if group_alive(self.process.pid):
                return None, now + POLL_SECONDS  # background jobs of the group may still exit
            self.escaped_since = now
        return self.escaped_since + self.shell.escaped_grace_seconds, None

    async def _pump(self, reader: asyncio.StreamReader, on_data: Callable[[bytes], Any]) -> None:
        read: asyncio.Future[bytes] = asyncio.ensure_future(reader.read(READ_SIZE))
        try:
            while True:
                self.wake.clear()
                now = time.monotonic()
                deadline, recheck = self._deadline(now)
                if deadline is not None and now >= deadline:
                    if self.killed_at is None:
                        self.left_open = pipe_holders(self.inode)
                    return
                until = min((t for t in (deadline, recheck) if t is not None), default=None)
                woken = asyncio.ensure_future(self.wake.wait())
                await asyncio.wait(
                    {read, woken},
                    timeout=None if until is None else max(0.0, until - now),
                    return_when=asyncio.FIRST_COMPLETED,
                )
                woken.cancel()
                if not read.done():
                    continue
                chunk = read.result()
                if not chunk:
                    return
                result = on_data(chunk)
                if inspect.isawaitable(result):
                    await result
                read = asyncio.ensure_future(reader.read(READ_SIZE))
        finally:
            read.cancel()

    def _result(self) -> ExecResult:
        code = self.process.returncode
        if code is not None and code < 0:
            code = 128 - code
        shell_exit = None
        if self.exited_at is not None and time.monotonic() - self.exited_at > 0.5:
            shell_exit = self.exited_at - self.started
        return ExecResult(
            exit_code=code,
            timed_out=self.reason == "timed_out",
            aborted=self.reason == "aborted",
            shell_exited_after=shell_exit,
            output_left_open=self.left_open,
        )


SESSION_VARIABLES = ("PI_SESSION_ID", "PI_SESSION_FILE", "PI_PROVIDER", "PI_MODEL", "PI_REASONING_LEVEL")
"""The session's variables a command may get; inherited values are dropped so a nested pi does not
leak its own."""


AGENT_MARKERS = {"PI_CODING_AGENT": "true", "AI_AGENT": "pi"}
"""Set in every command's environment (the agent's and the user's ``!`` commands), as pi sets them
on its own process at start-up so that all its children inherit them."""


def command_environment(scrub_keys: bool = False, key_variables: tuple[str, ...] = ()) -> dict[str, str]:
    """This process's environment for a command, plus :data:`AGENT_MARKERS`, without inherited
    session variables; with ``scrub_keys`` (the ``shellScrubProviderKeys`` setting) also without
    the providers' key variables, which are then also hidden from what the command can read about
    pi itself (``/proc/$PPID/environ``, ``--api-key`` in its arguments: :mod:`.own_environment`).
    As in pi, keys are inherited by default."""
    env = {name: value for name, value in os.environ.items() if name not in SESSION_VARIABLES}
    env.update(AGENT_MARKERS)
    if scrub_keys:
        from pi_host.lib.toolkit.own_environment import hide_keys

        hide_keys(key_variables)
        for name in key_variables:
            env.pop(name, None)
    return env
