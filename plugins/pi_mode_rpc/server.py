"""The RPC loop: framing, command dispatch, the event stream and shutdown.

stdin is read by a thread and split on LF only (a U+2028 inside a JSON string is not a record
boundary; ``framing.py``); an optional CR before it is stripped.
Each command runs as its own task, so a command waiting for a dialog answer does not hold up
the ``extension_ui_response`` that answers it, and responses may come out of order (clients
correlate by ``id``). Stdin EOF, or the first SIGTERM/SIGHUP/SIGINT, starts an orderly shutdown:
the run in progress is aborted, the commands in flight finish, open dialogs get their default.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from typing import Any

from pi_host.lib.wire import encode_line
from pi_host.loop import events
from pi_mode_rpc.framing import LineSplitter, parse_command
from pi_mode_rpc.ui import RpcUI

READ_SIZE = 1 << 20
"""Bytes asked of stdin per read (a large line arrives in few reads)."""
SHUTDOWN_GRACE_S = 10.0
"""How long commands still in flight may take once a shutdown started."""


class RpcServer:
    def __init__(self, request: Any, stdin: int | None = None, stdout: Any = None) -> None:
        self.request = request
        self.stdin_fd = stdin if stdin is not None else sys.stdin.fileno()
        self.stdout = (
            stdout if stdout is not None else (getattr(request.stdout, "buffer", None) or sys.stdout.buffer)
        )
        self.ui = RpcUI(self.send)
        self.tasks: set[asyncio.Task[Any]] = set()
        self.closed = False
        self.bash_controller: Any = None
        self.open_message: Any = None
        """The assistant message streaming now (pi counts it among the messages at its end)."""
        self.muted_bash = 0
        """RPC ``bash`` commands recording their message now: pi sends no message events for it."""
        self._unsubscribe: Any = None
        self._hosts: set[int] = set()
        """Plugin hosts whose failures are sent as ``extension_error`` (a reload brings a new one)."""
        self._shutdown_requested = False
        self._lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._stop = asyncio.Event()
        self._ready = asyncio.Event()

    @property
    def session(self) -> Any:
        return self.request.session

    # --- output ------------------------------------------------------------------------------

    def send(self, record: dict[str, Any]) -> None:
        kind = record.get("type")
        if kind == "message_start" and getattr(record.get("message"), "role", None) == "assistant":
            self.open_message = record["message"]
        elif kind == "message_end":
            self.open_message = None
        if self.closed:
            return
        if self.muted_bash and record.get("type") in ("message_start", "message_end"):
            if getattr(record.get("message"), "role", None) == "bashExecution":
                return
        try:
            line = encode_line(record)
        except RecursionError:
            line = _unencodable(record)
            if line is None:
                return
        try:
            self.stdout.write(line)
            self.stdout.flush()
        except (BrokenPipeError, ValueError, OSError):
            self.closed = True  # the client went away: nothing more to say, shut down
            self._stop.set()

    def respond(self, command: str, ident: Any, data: Any = ..., error: str | None = None) -> None:
        record: dict[str, Any] = {}
        if ident is not None:
            record["id"] = ident
        record.update(type="response", command=command, success=error is None)
        if error is not None:
            record["error"] = error
        elif data is not ...:
            record["data"] = data
        self.send(record)

    # --- sessions ----------------------------------------------------------------------------

    def attach(self, session: Any) -> None:
        """Serve ``session`` from now on (at start, and after new/switch/fork/clone). The queue
        modes and toggles set over RPC carry over, as pi keeps them in its settings."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            old = self.request.session
            if old is not session:
                session.config.steering_mode = old.config.steering_mode
                session.config.follow_up_mode = old.config.follow_up_mode
                session.auto_retry_enabled = old.auto_retry_enabled
                compaction = (old.config.settings or {}).get("compaction")
                if isinstance(compaction, dict):
                    session.config.settings = {**(session.config.settings or {}), "compaction": compaction}
        self.request.serve(session)
        self._unsubscribe = session.subscribe(self.send)
        self._watch_host(session.host)

    def _watch_host(self, host: Any) -> None:
        if id(host) not in self._hosts:
            self._hosts.add(id(host))
            host.on_error(lambda failure: self.send(events.extension_error(failure)))

    def control(self) -> Any:
        """``ctx.new_session`` and the rest act as the RPC commands of the same names do;
        ``ctx.shutdown()`` ends the server after the command in flight and the run."""
        from pi_host.runtime.switching import SessionControl

        return SessionControl(self.request.factory, self.attach, shutdown=self.request_shutdown)

    def request_shutdown(self) -> None:
        """Stop once the session is idle and the commands in flight have answered (pi's
        deferred ``ctx.shutdown()``)."""
        if self._shutdown_requested:
            return
        self._shutdown_requested = True
        asyncio.get_running_loop().create_task(self._shutdown_when_idle())

    async def _shutdown_when_idle(self) -> None:
        await asyncio.sleep(0)  # the requesting command's own response goes out first
        while True:
            try:
                await self.session.wait_for_idle()
            except Exception:  # the run's failure was reported with its events
                pass
            pending = set(self.tasks)
            if pending:
                await asyncio.wait(pending)
                continue
            if not self.session.is_streaming:
                break
        self._stop.set()

    # --- input -------------------------------------------------------------------------------

    def _read_stdin(self, loop: asyncio.AbstractEventLoop) -> None:
        # os.read on the descriptor, not the buffered stdin object: a thread blocked inside
        # the buffered reader holds its lock, and interpreter shutdown (after a signal) aborts
        # the process waiting for it.
        splitter = LineSplitter()
        try:
            while True:
                chunk = os.read(self.stdin_fd, READ_SIZE)
                if not chunk:
                    break
                for line in splitter.feed(chunk):
                    loop.call_soon_threadsafe(self._lines.put_nowait, line)
        except (OSError, ValueError, RuntimeError):
            pass
        try:
            if rest := splitter.rest():
                loop.call_soon_threadsafe(self._lines.put_nowait, rest)
            loop.call_soon_threadsafe(self._lines.put_nowait, None)
        except RuntimeError:  # the loop is gone: the process is ending anyway
            pass

    def handle_line(self, raw: bytes) -> None:
        record = parse_command(raw)
        if record is None:
            return
        if isinstance(record, str):
            self.respond("parse", None, error=record)
            return
        if record.get("type") == "extension_ui_response":
            self.ui.answer(record)
            return
        task = asyncio.get_running_loop().create_task(self.run_command(record))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def run_command(self, record: dict[str, Any]) -> None:
        from pi_mode_rpc.commands import COMMANDS

        name = record.get("type")
        ident = record.get("id")
        await self._ready.wait()  # commands sent while the session opens run once it is open
        handler = COMMANDS.get(name) if isinstance(name, str) else None
        if handler is None:
            self.respond(str(name), ident, error=f"Unknown command: {name}")
            return
        try:
            data = await handler(self, record)
        except Exception as exc:  # every failure is the error string of the response
            self.respond(name, ident, error=str(exc) or type(exc).__name__)
            return
        self.respond(name, ident, data)

    # --- the loop ----------------------------------------------------------------------------

    async def serve(self) -> int:
        loop = asyncio.get_running_loop()
        self.request.on_interrupt = self._stop.set
        # Lines are read from the start: a plugin's dialog at session_start is answered by an
        # extension_ui_response while the session is still opening; commands wait for it.
        threading.Thread(target=self._read_stdin, args=(loop,), name="pi-rpc-stdin", daemon=True).start()
        opening = loop.create_task(self._open())
        stop = loop.create_task(self._stop.wait())
        try:
            while True:
                line_task = loop.create_task(self._lines.get())
                done, _ = await asyncio.wait({line_task, stop}, return_when=asyncio.FIRST_COMPLETED)
                if line_task not in done:
                    line_task.cancel()
                    break
                line = line_task.result()
                if line is None:
                    break
                self.handle_line(line)
        finally:
            stop.cancel()
            if not opening.done():
                opening.cancel()
            await self.shutdown()
        if opening.done() and not opening.cancelled() and opening.exception() is not None:
            raise opening.exception()  # the session could not be opened: the CLI says why
        return 0

    async def _open(self) -> None:
        """Open the run's session with this server's UI and control, then serve it."""
        try:
            session = await self.request.open_session(ui=self.ui, control=self.control())
        except BaseException:
            self._stop.set()
            raise
        self.attach(session)
        for error in self.request.load_errors:
            self.send(events.extension_error(error))
        self._ready.set()

    async def shutdown(self) -> None:
        """Abort the run, let the commands in flight answer, give open dialogs their default."""
        self.ui.cancel_all()
        if self.bash_controller is not None:
            self.bash_controller.abort("Shutting down")
        if self.session is None:
            for task in list(self.tasks):
                task.cancel()
            return
        if self.session.is_streaming:
            await self.session.abort()
        if self.tasks:
            await asyncio.wait(set(self.tasks), timeout=SHUTDOWN_GRACE_S)
        for task in list(self.tasks):
            task.cancel()
        if self._unsubscribe is not None:
            self._unsubscribe()


def _unencodable(record: dict[str, Any]) -> bytes | None:
    """What to send for a record nested deeper than the encoder goes (a plugin's data, say): a
    response still answers its command, as a failure; an event is dropped."""
    if record.get("type") != "response":
        return None
    answer: dict[str, Any] = {}
    if isinstance(record.get("id"), (str, int, float)):
        answer["id"] = record["id"]
    command = record.get("command")
    answer.update(
        type="response",
        command=command if isinstance(command, str) else "unknown",
        success=False,
        error="Failed to encode the response: nested too deeply",
    )
    return encode_line(answer)
