"""A Python client for ``pi --mode rpc`` (pi-host's, or pi 1.6.0's: the protocol is the same).

    from pi_host.rpc import RpcClient

    with RpcClient(args=["--model", "anthropic/claude-sonnet-4-5", "--no-session"]) as pi:
        events = pi.prompt_and_wait("What is in this folder?")
        print(pi.get_last_assistant_text())

The client owns the child's pipes: commands go to stdin with ids of its making; a reader thread
cuts stdout on LF bytes only (a CR before it is dropped; U+2028/U+2029 stay inside strings) and
sorts the records: a ``response`` for a call in flight completes it, every other record goes to
the :meth:`RpcClient.on_event` listeners and to the queue of :meth:`RpcClient.next_event`;
another thread keeps :attr:`RpcClient.stderr`. Command methods are named after the commands,
take their fields in snake case and return the response's ``data`` or raise :class:`RpcError`.
Standard library only.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pi_host.rpc as api
from pi_host.rpc import DIALOG_METHODS, Record, RpcClosedError, RpcError, RpcTimeoutError, UiAnswer

__all__ = ["RpcClient"]


# --- the client ----------------------------------------------------------------------------------


class _Pending:
    __slots__ = ("done", "response", "failure", "settled_before")

    def __init__(self, settled_before: int) -> None:
        self.done = threading.Event()
        self.response: Record | None = None
        self.failure: BaseException | None = None
        self.settled_before = settled_before  # agent_settled seen when the command was sent


_CLOSED = object()


class RpcClient:
    """One agent process in RPC mode.

    ``argv`` is the whole command line (for pi 1.6.0: ``[node, cli_js, "--mode", "rpc"]``); by
    default it is ``[sys.executable, "-m", "pi_host", "--mode", "rpc"]``. ``args`` are appended to
    it (``["--no-session"]``, ``["--model", "loop/loop-1"]``...). ``cwd`` and ``env`` go to
    :class:`subprocess.Popen` (``env=None`` inherits this process's environment). ``timeout`` is
    the default number of seconds a command waits for its response.
    """

    def __init__(
        self,
        argv: Sequence[str] | None = None,
        *,
        args: Iterable[str] = (),
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 60.0,
    ) -> None:
        base = list(argv) if argv is not None else [sys.executable, "-m", "pi_host", "--mode", "rpc"]
        self.argv: list[str] = [*base, *args]
        self.timeout = timeout
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._pending: dict[str, _Pending] = {}
        self._listeners: list[Callable[[Record], None]] = []
        self._ui_handler: Callable[[Record], UiAnswer] | None = None
        self._ui_early: list[Record] = []
        self._ui_queue: queue.Queue[Any] = queue.Queue()
        self._events: queue.Queue[Any] = queue.Queue()
        self._stderr_chunks: list[bytes] = []
        self._run_active = False
        self._idle = threading.Condition(self._lock)
        self._settled_count = 0
        self._closed = False
        self._reader_done = False
        self.invalid_lines: list[bytes] = []
        """stdout lines that were not JSON objects (a conforming agent writes none)."""
        self.listener_errors: list[BaseException] = []
        """Exceptions raised by event listeners and UI callbacks (they never stop the reader)."""

        self.process = subprocess.Popen(
            self.argv,
            cwd=os.fspath(cwd) if cwd is not None else None,
            env=dict(env) if env is not None else None,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
        )
        self._reader = threading.Thread(target=self._read_stdout, name="rpc-stdout", daemon=True)
        self._stderr_reader = threading.Thread(target=self._read_stderr, name="rpc-stderr", daemon=True)
        self._ui_worker = threading.Thread(target=self._answer_ui, name="rpc-ui", daemon=True)
        self._reader.start()
        self._stderr_reader.start()
        self._ui_worker.start()

    # --- process -------------------------------------------------------------------------------

    @property
    def returncode(self) -> int | None:
        """The exit code once the process has ended, else None."""
        return self.process.poll()

    @property
    def stderr(self) -> str:
        """Everything the agent wrote to stderr so far (decoded as UTF-8, bad bytes replaced)."""
        with self._lock:
            return self._stderr_text()

    def _stderr_text(self) -> str:  # with the lock held
        return b"".join(self._stderr_chunks).decode("utf-8", errors="replace")

    def close(self, timeout: float = 10.0) -> int:
        """Close stdin (pi's orderly shutdown: an in-flight run is aborted), wait up to ``timeout``
        seconds for the process to exit, then kill it. Returns the exit code."""
        self._closed = True
        with contextlib.suppress(OSError), self._write_lock:
            if self.process.stdin is not None:
                self.process.stdin.close()
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        self._reader.join(timeout=5)
        self._stderr_reader.join(timeout=5)
        self._ui_queue.put(_CLOSED)
        self._ui_worker.join(timeout=5)
        return code

    def __enter__(self) -> RpcClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # a forgotten client must not leave a process behind
        process = getattr(self, "process", None)
        if process is not None and process.poll() is None:
            with contextlib.suppress(OSError):
                process.kill()

    # --- sending -------------------------------------------------------------------------------

    def send(self, record: Mapping[str, Any]) -> None:
        """Write one record as a JSON line, without waiting for anything."""
        self.send_line(json.dumps(record, ensure_ascii=False))

    def send_line(self, line: str | bytes) -> None:
        """Write raw text (a malformed command, for instance); a final LF is added if missing."""
        data = line.encode("utf-8") if isinstance(line, str) else bytes(line)
        if not data.endswith(b"\n"):
            data += b"\n"
        stdin = self.process.stdin
        if stdin is None or stdin.closed:
            raise RpcClosedError("stdin is closed", self.returncode, self.stderr)
        try:
            with self._write_lock:
                stdin.write(data)
                stdin.flush()
        except (BrokenPipeError, ValueError, OSError) as exc:
            raise RpcClosedError(f"cannot write to the agent: {exc}", self.returncode, self.stderr) from exc

    def request(
        self, command: str, fields: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> Record:
        """Send ``{"id", "type": command, **fields}`` and return the whole ``response`` record
        (successful or not). Fields whose value is None are left out."""
        ident = f"req-{next(self._ids)}"
        record: Record = {"id": ident, "type": command}
        for key, value in (fields or {}).items():
            if value is not None:
                record[key] = value
        with self._lock:
            if self._reader_done or self._closed:
                raise RpcClosedError("the agent has exited", self.process.poll(), self._stderr_text())
            pending = _Pending(self._settled_count)
            self._pending[ident] = pending
        try:
            self.send(record)
            wait = self.timeout if timeout is None else timeout
            if not pending.done.wait(wait):
                raise RpcTimeoutError(f"no response to {command!r} within {wait} s")
        finally:
            with self._lock:
                self._pending.pop(ident, None)
        if pending.failure is not None:
            raise pending.failure
        assert pending.response is not None
        return pending.response

    def call(
        self, command: str, fields: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> Any:
        """:meth:`request`, returning the response's ``data`` or raising :class:`RpcError`."""
        response = self.request(command, fields, timeout=timeout)
        if not response.get("success"):
            raise RpcError(command, str(response.get("error", "")), response)
        return response.get("data")

    # --- events --------------------------------------------------------------------------------

    def on_event(self, callback: Callable[[Record], None]) -> Callable[[], None]:
        """Call ``callback(record)`` for every record that is not the response of a call in flight.
        It runs on the reader thread: it must not block nor call the client's commands. Returns a
        function that unsubscribes it."""
        with self._lock:
            self._listeners.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._listeners:
                    self._listeners.remove(callback)

        return unsubscribe

    def next_event(self, timeout: float | None = None) -> Record:
        """The next record from the event queue (every record the listeners get, in order)."""
        try:
            item = self._events.get(timeout=self.timeout if timeout is None else timeout)
        except queue.Empty:
            raise RpcTimeoutError("no event within the timeout") from None
        if item is _CLOSED:
            self._events.put(_CLOSED)
            raise RpcClosedError("the agent's stdout closed", self.returncode, self.stderr)
        return item

    def drain_events(self) -> list[Record]:
        """Every record now in the event queue, removing them."""
        out: list[Record] = []
        while True:
            try:
                item = self._events.get_nowait()
            except queue.Empty:
                return out
            if item is _CLOSED:
                self._events.put(_CLOSED)
                return out
            out.append(item)

    def wait_for_event(
        self, predicate: Callable[[Record], bool] | str, timeout: float | None = None
    ) -> Record:
        """Read the event queue until a record matches (``predicate`` may be an event ``type``);
        the records before it are consumed."""
        test = (lambda r: r.get("type") == predicate) if isinstance(predicate, str) else predicate
        wait = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RpcTimeoutError(f"no matching event within {wait} s")
            record = self.next_event(timeout=left)
            if test(record):
                return record

    @property
    def is_running(self) -> bool:
        """True from a started prompt (or an ``agent_start``) until the next ``agent_settled``."""
        with self._lock:
            return self._run_active

    def wait_for_idle(self, timeout: float | None = None) -> bool:
        """Wait until no run is active (see :attr:`is_running`): at once when idle, else until the
        run's ``agent_settled``. Returns False when the process ended first."""
        wait = self.timeout if timeout is None else timeout
        with self._idle:
            ok = self._idle.wait_for(lambda: not self._run_active or self._reader_done, wait)
            if not ok:
                raise RpcTimeoutError(f"the agent did not settle within {wait} s")
            return not self._run_active

    def prompt_and_wait(
        self,
        message: str,
        images: list[Record] | None = None,
        *,
        streaming_behavior: api.StreamingBehavior | None = None,
        timeout: float | None = None,
    ) -> list[Record]:
        """Send a prompt and wait for the ``agent_settled`` that ends its run. Returns every record
        the listeners got from the moment before sending until then (the ``agent_settled``
        included). A prompt the agent ``handled`` without a run returns at once; one it ``queued``
        waits for the settling of the run it joined. Raises :class:`RpcError` when refused."""
        collected: list[Record] = []
        settled = threading.Event()

        def collect(record: Record) -> None:
            collected.append(record)
            if record.get("type") == "agent_settled":
                settled.set()

        unsubscribe = self.on_event(collect)
        try:
            data = self.prompt(message, images, streaming_behavior=streaming_behavior)
            if data and data.get("disposition") == "handled":
                return list(collected)
            wait = self.timeout if timeout is None else timeout
            deadline = time.monotonic() + wait
            while not settled.wait(0.05):
                if self._reader_done:
                    raise RpcClosedError("the agent exited during the run", self.returncode, self.stderr)
                if time.monotonic() > deadline:
                    raise RpcTimeoutError(f"the prompt did not settle within {wait} s")
            return list(collected)
        finally:
            unsubscribe()

    # --- extension UI --------------------------------------------------------------------------

    def on_ui_request(self, callback: Callable[[Record], UiAnswer]) -> Callable[[], None]:
        """Answer the agent's extension UI: ``callback(record)`` gets every
        ``extension_ui_request`` (dialogs and fire-and-forget ones alike) on a worker thread of its
        own (so it may take its time and call commands). For a dialog (``select``, ``confirm``,
        ``input``, ``editor``) its return value is sent as the ``extension_ui_response`` (see
        :data:`UiAnswer`); for the others it is ignored. One callback at a time: a new one replaces
        the previous; requests that came before any (``session_start``) go to the first. Returns a
        function that removes it (dialogs then wait for the next callback)."""
        with self._lock:
            self._ui_handler = callback
            early, self._ui_early = self._ui_early, []
        for record in early:  # asked before there was a callback (a plugin's session_start)
            self._ui_queue.put(record)

        def unsubscribe() -> None:
            with self._lock:
                if self._ui_handler is callback:
                    self._ui_handler = None

        return unsubscribe

    def respond_ui(self, request_id: str, answer: UiAnswer, method: str | None = None) -> None:
        """Send the ``extension_ui_response`` for dialog ``request_id`` (``answer`` as in
        :data:`UiAnswer`; ``method`` decides what a bool or string means when given)."""
        self.send({"type": "extension_ui_response", "id": request_id, **_ui_fields(answer, method)})

    def _answer_ui(self) -> None:
        while True:
            record = self._ui_queue.get()
            if record is _CLOSED:
                return
            with self._lock:
                handler = self._ui_handler
                if handler is None:  # kept until on_ui_request gives a callback
                    self._ui_early.append(record)
                    continue
            try:
                answer = handler(record)
            except Exception as exc:  # noqa: BLE001 - reported, the dialog is cancelled
                self.listener_errors.append(exc)
                answer = None
            method = record.get("method")
            if method in DIALOG_METHODS and "id" in record:
                try:
                    self.respond_ui(str(record["id"]), answer, method)
                except RpcClosedError:
                    return

    # --- reading -------------------------------------------------------------------------------

    def _read_stdout(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        buffer = b""
        try:
            while chunk := stdout.read(65536):
                *lines, buffer = (buffer + chunk).split(b"\n")  # LF only: never str.splitlines
                for line in lines:
                    self._handle_line(line)
            if buffer:
                self._handle_line(buffer)
        finally:
            self._finish_reading()

    def _handle_line(self, line: bytes) -> None:
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line.strip():
            return
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            self.invalid_lines.append(line)
            return
        self._dispatch(record)

    def _dispatch(self, record: Record) -> None:
        kind = record.get("type")
        with self._lock:
            pending = self._pending.get(record.get("id")) if kind == "response" else None  # type: ignore[arg-type]
            if pending is not None:
                if record.get("command") == "prompt" and record.get("success"):
                    data = record.get("data") or {}
                    # a run that already settled (a fast one, answered late) is not active
                    if data.get("disposition") == "started" and self._settled_count == pending.settled_before:
                        self._run_active = True
                pending.response = record
                pending.done.set()
                return
            if kind == "agent_start":
                self._run_active = True
            elif kind == "agent_settled":
                self._run_active = False
                self._settled_count += 1
                self._idle.notify_all()
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(record)
            except Exception as exc:  # noqa: BLE001 - a listener never stops the reader
                self.listener_errors.append(exc)
        self._events.put(record)
        if kind == "extension_ui_request":
            self._ui_queue.put(record)

    def _finish_reading(self) -> None:
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self._stderr_reader.join(timeout=2)
        failure = RpcClosedError("the agent's stdout closed", self.process.poll(), self.stderr)
        with self._lock:
            self._reader_done = True
            pending = list(self._pending.values())
            self._idle.notify_all()
        for item in pending:
            item.failure = failure
            item.done.set()
        self._events.put(_CLOSED)

    def _read_stderr(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        while True:
            chunk = stderr.read(65536)
            if not chunk:
                return
            with self._lock:
                self._stderr_chunks.append(chunk)

    # --- commands: prompting -------------------------------------------------------------------

    def prompt(
        self,
        message: str,
        images: list[Record] | None = None,
        streaming_behavior: api.StreamingBehavior | None = None,
    ) -> api.PromptResult:
        """Send a prompt (``streaming_behavior`` is required while a run is active). The response
        comes once the prompt is accepted; the run's events follow (see :meth:`prompt_and_wait`)."""
        return self.call(
            "prompt", {"message": message, "images": images, "streamingBehavior": streaming_behavior}
        )

    def steer(self, message: str, images: list[Record] | None = None) -> api.PromptResult:
        return self.call("steer", {"message": message, "images": images})

    def follow_up(self, message: str, images: list[Record] | None = None) -> api.PromptResult:
        return self.call("follow_up", {"message": message, "images": images})

    def abort(self) -> None:
        """Abort the current run; answers once the session is idle."""
        return self.call("abort")

    def clear_queue(self) -> api.QueueContents:
        return self.call("clear_queue")

    def new_session(self, parent_session: str | None = None) -> api.Cancelled:
        return self.call("new_session", {"parentSession": parent_session})

    # --- commands: state and model -------------------------------------------------------------

    def get_state(self) -> api.SessionState:
        return self.call("get_state")

    def get_messages(self) -> Record:
        """``{messages}``: the agent's current messages."""
        return self.call("get_messages")

    def set_model(self, provider: str, model_id: str) -> Record:
        """Switch model; returns the model object."""
        return self.call("set_model", {"provider": provider, "modelId": model_id})

    def cycle_model(self) -> api.ModelCycle | None:
        return self.call("cycle_model")

    def get_available_models(self) -> Record:
        """``{models}``: every configured model that has credentials."""
        return self.call("get_available_models")

    def set_thinking_level(self, level: api.ThinkingLevel) -> None:
        return self.call("set_thinking_level", {"level": level})

    def cycle_thinking_level(self) -> api.ThinkingCycle | None:
        return self.call("cycle_thinking_level")

    def get_available_thinking_levels(self) -> Record:
        """``{levels}``: the current model's thinking levels."""
        return self.call("get_available_thinking_levels")

    def set_steering_mode(self, mode: api.QueueMode) -> None:
        return self.call("set_steering_mode", {"mode": mode})

    def set_follow_up_mode(self, mode: api.QueueMode) -> None:
        return self.call("set_follow_up_mode", {"mode": mode})

    # --- commands: compaction, retry, bash -----------------------------------------------------

    def compact(self, custom_instructions: str | None = None) -> Record:
        """Compact now; returns the compaction result (summary, firstKeptEntryId, tokensBefore...)."""
        return self.call("compact", {"customInstructions": custom_instructions})

    def set_auto_compaction(self, enabled: bool) -> None:
        return self.call("set_auto_compaction", {"enabled": enabled})

    def set_auto_retry(self, enabled: bool) -> None:
        return self.call("set_auto_retry", {"enabled": enabled})

    def abort_retry(self) -> None:
        return self.call("abort_retry")

    def bash(self, command: str, exclude_from_context: bool = False) -> api.BashResult:
        """Run a shell command (its output streams as ``bash_execution_update`` events with this
        call's id); the result reaches the model with the next prompt unless excluded."""
        return self.call(
            "bash", {"command": command, "excludeFromContext": True if exclude_from_context else None}
        )

    def abort_bash(self) -> None:
        return self.call("abort_bash")

    # --- commands: session ---------------------------------------------------------------------

    def get_session_stats(self) -> api.SessionStats:
        return self.call("get_session_stats")

    def export_html(self, output_path: str | os.PathLike[str] | None = None) -> Record:
        """Write the session as HTML; ``{path}`` of the file written."""
        path = os.fspath(output_path) if output_path is not None else None
        return self.call("export_html", {"outputPath": path})

    def switch_session(self, session_path: str | os.PathLike[str]) -> api.Cancelled:
        return self.call("switch_session", {"sessionPath": os.fspath(session_path)})

    def fork(self, entry_id: str) -> api.ForkResult:
        return self.call("fork", {"entryId": entry_id})

    def clone(self) -> api.Cancelled:
        return self.call("clone")

    def get_fork_messages(self) -> Record:
        """``{messages: [{entryId, text}]}``: the user messages one can fork from."""
        return self.call("get_fork_messages")

    def get_entries(self, since: str | None = None) -> api.Entries:
        return self.call("get_entries", {"since": since})

    def get_tree(self) -> api.Tree:
        return self.call("get_tree")

    def get_last_assistant_text(self) -> Record:
        """``{text}``: the last assistant text (``None`` when there is none)."""
        return self.call("get_last_assistant_text")

    def set_session_name(self, name: str) -> None:
        return self.call("set_session_name", {"name": name})

    def get_commands(self) -> Record:
        """``{commands}``: extension commands, prompt templates and skills."""
        return self.call("get_commands")


def _ui_fields(answer: UiAnswer, method: str | None) -> Record:
    if answer is None:
        return {"cancelled": True}
    if isinstance(answer, Mapping):
        return dict(answer)
    if isinstance(answer, bool):
        return {"confirmed": answer}
    if method == "confirm":
        return {"confirmed": bool(answer)}
    return {"value": str(answer)}
