"""One connection to one MCP server.

A connection lives in its own task: it opens the transport (stdio or streamable HTTP), runs
``initialize`` and ``tools/list``, then waits until it is stopped or the server goes away. Tool
calls come from other tasks through :meth:`Connection.call`, which waits for the connection.
On POSIX a stdio server runs on pi-host's own transport (:mod:`pi_mcp.stdio`) and session
(:mod:`pi_mcp.session`), without the official ``mcp`` SDK; streamable HTTP servers (and stdio
elsewhere, on the SDK's ``stdio_client``) go through the SDK, imported here only.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import anyio

from pi_mcp.config import ServerConfig, expand_home, resolve_value

STDERR_TAIL = 20
STOP_GRACE_S = 1.0
"""How long a stopping stdio server has after its stdin closes before SIGTERM (then SIGKILL)."""
STOP_WAIT_S = 6.0
"""How long :meth:`Connection.stop` waits for the connection to wind down before forcing it."""
IMPORT_SWITCH_INTERVAL_S = 0.0001
"""The interpreter's thread switch interval while the SDK imports in its thread (default 5 ms)."""
OWN_STDIO = os.name == "posix"

_sdk: asyncio.Future[None] | None = None
_current: contextvars.ContextVar[Any] = contextvars.ContextVar("pi_mcp_connection", default=None)
"""The connection whose task is running: where the SDK's log records about it go."""


class _SdkLog(logging.Handler):
    """The SDK logs failures with tracebacks (bad JSON from a server...). None reaches stderr:
    the first becomes a note on the connection it happened in (``/mcp`` shows it)."""

    def emit(self, record: logging.LogRecord) -> None:
        connection = _current.get()
        if connection is not None and record.levelno >= logging.WARNING:
            with contextlib.suppress(Exception):
                connection.note_sdk(record.getMessage())


def _import_sdk() -> None:
    import mcp.client.session  # noqa: F401
    import mcp.shared.message  # noqa: F401
    import mcp_types  # noqa: F401

    if not OWN_STDIO:
        import mcp.client.stdio  # noqa: F401
    sdk_log = logging.getLogger("mcp")
    if not any(isinstance(h, _SdkLog) for h in sdk_log.handlers):
        sdk_log.addHandler(_SdkLog())
        sdk_log.propagate = False


async def load_sdk() -> None:
    """Import the SDK (about a second) in a daemon thread: the session goes on meanwhile, and a run
    that ends first does not wait for it."""
    global _sdk
    if _sdk is None or _sdk.get_loop() is not asyncio.get_running_loop():
        import threading

        loop = asyncio.get_running_loop()
        _sdk = future = loop.create_future()

        def work() -> None:
            # While this thread imports, the session's own thread wants the GIL back after every
            # socket read; at the default 5 ms switch interval each of those waits made a -p run
            # with a deferred server take 1.2 s instead of 0.75 s.
            interval = sys.getswitchinterval()
            sys.setswitchinterval(IMPORT_SWITCH_INTERVAL_S)
            try:
                _import_sdk()
                error = None
            except BaseException as exc:  # noqa: BLE001
                error = exc
            finally:
                sys.setswitchinterval(interval)

            def done() -> None:
                if future.done():
                    return
                if error is None:
                    future.set_result(None)
                else:
                    future.set_exception(error)

            with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits any more
                loop.call_soon_threadsafe(done)

        threading.Thread(target=work, name="pi-mcp-import", daemon=True).start()
    await asyncio.shield(_sdk)


class Connection:
    def __init__(
        self,
        config: ServerConfig,
        cwd: str,
        on_change: Callable[[Connection], Any],
        on_warn: Callable[[str], Any] | None = None,
    ) -> None:
        self.config = config
        self.cwd = cwd
        self.on_change = on_change
        self.on_warn = on_warn
        """Says one line (the session's warning); None: nobody to tell (``pi mcp list``)."""
        self.state = "disabled" if not config.enabled else "idle"
        """``idle``, ``connecting``, ``connected``, ``failed``, ``disconnected``, ``disabled``, or
        ``needs-auth`` (an OAuth server that wants a sign-in: shown as "needs sign-in")."""
        self.error: str | None = None
        self.tools: list[Any] = []
        self.instructions: str | None = None
        self.resources = False
        self._session: Any = None
        self._ready = asyncio.Event()
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[Any] | None = None
        self._notified = self.state
        self._stderr: Any = None
        self.auth: Any = None
        """An OAuth server's ``httpx2.Auth`` (pi_mcp.oauth), kept across reconnects."""
        self._token_when_refused: str | None = None
        self._keeping = False
        self._stopping: asyncio.Future[None] | None = None
        self._relists: set[asyncio.Task[None]] = set()
        self._process: Any = None
        self._handed = False
        """The transport took the process (and stops it on leaving)."""
        self._scope: anyio.CancelScope | None = None
        self._started = 0.0
        self.junk: str | None = None
        """The first thing the server wrote that is not JSON-RPC (quoted, shortened)."""
        self.sdk_note: str | None = None
        """The first warning the SDK logged about this connection (shown by ``/mcp``)."""
        self._junk_said = False

    # --- life -------------------------------------------------------------------------------

    def start(self) -> None:
        if not self.config.enabled or (self._task is not None and not self._task.done()):
            return
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self.state, self.error, self.tools = "connecting", None, []
        self.junk, self._junk_said, self.sdk_note = None, False, None
        self._started = time.monotonic()
        if self.auth is not None:
            self.auth.needs_sign_in = False
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        """Stop the connection and its server. A connected server gets :data:`STOP_GRACE_S` after
        its stdin closes; one still starting is cancelled at once (through the connection's
        cancel scope, so the transport's shielded shutdown still ends the process). Whatever
        happens, the server's process group is gone afterwards."""
        task, self._task = self._task, None
        if task is None:
            return
        if self._stop is not None:
            self._stop.set()
        if self.state != "connected":  # still starting: no grace period for a server nobody used
            if self._scope is not None:
                self._scope.cancel()
            else:  # still importing the SDK or spawning: nothing to wind down yet
                task.cancel()
        done, _pending = await asyncio.wait({task}, timeout=STOP_WAIT_S)
        if not done:
            task.cancel()
            await asyncio.wait({task}, timeout=2)
        if task.done() and not task.cancelled():
            task.exception()  # retrieved: the state already says what happened
        self._end_process()

    def _end_process(self) -> None:
        """The last resort: SIGKILL to the server's process group if anything of it is left."""
        process, self._process = self._process, None
        if process is not None and OWN_STDIO:
            from pi_mcp import stdio

            stdio.kill_group(process)

    async def stop_keep_state(self) -> None:
        """Stop, keeping what was found (``pi mcp list`` reports it afterwards)."""
        state, error, tools = self.state, self.error, self.tools
        self._keeping = True
        try:
            await self.stop()
        finally:
            self._keeping = False
        self.state, self.error, self.tools = state, error, tools
        if self.state != self._notified:
            self._changed()

    async def restart(self) -> None:
        await self.stop()
        self.start()

    async def wait(self, timeout: float | None = None) -> bool:
        """Wait until the connection is up or has failed; True when connected."""
        if self.state not in ("connecting",):
            return self.state == "connected"
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._ready.wait(), timeout)
        return self.state == "connected"

    def stderr_tail(self) -> list[str]:
        if self._stderr is None:
            return []
        with contextlib.suppress(OSError, ValueError):
            self._stderr.flush()
            self._stderr.seek(0)
            lines = self._stderr.read().decode("utf-8", "replace").splitlines()
            self._stderr.seek(0, os.SEEK_END)
            return lines[-STDERR_TAIL:]
        return []

    async def _run(self) -> None:
        # A stdio server starts while the SDK imports (about a second each, on two cores), so a
        # prompt that waits for it waits for the slower of the two, not for both in turn.
        _current.set(self)
        assert self._stop is not None
        stop = self._stop
        own = self._spawns_here()  # a stdio server on pi-host's own session: no SDK to import
        early = asyncio.ensure_future(self._spawn()) if own else None
        self._handed = False
        was_connected = False
        try:
            try:
                if not own:
                    await load_sdk()
            finally:
                if early is not None:  # a failed spawn raises here: the server's error
                    self._process = await early

            with anyio.CancelScope() as scope:
                self._scope = scope
                if stop.is_set():
                    scope.cancel()
                async with self._transport() as (read, write):
                    closed = asyncio.Event()
                    relay_send, relay_receive = anyio.create_memory_object_stream(0)

                    async def relay() -> None:
                        try:
                            async with relay_send:
                                async for item in read:
                                    await relay_send.send(item)
                        except Exception:
                            pass
                        finally:
                            closed.set()

                    async with anyio.create_task_group() as group:
                        group.start_soon(relay)
                        async with self._session_over(relay_receive, write, own) as session:
                            await self._initialize(session)
                            self._session = session
                            self.state, was_connected = "connected", True
                            self.junk = None  # a banner before initialize is forgiven
                            self._ready.set()
                            self._changed()
                            stopped = asyncio.ensure_future(stop.wait())
                            ended = asyncio.ensure_future(closed.wait())
                            await asyncio.wait({stopped, ended}, return_when=asyncio.FIRST_COMPLETED)
                            stopped.cancel()
                            ended.cancel()
                            self._session = None
                            if not stop.is_set():
                                self.state, self.error = "disconnected", self._with_junk("connection closed")
                                self._changed()  # now: closing the transport may take a while
                        group.cancel_scope.cancel()
        except BaseException as exc:  # noqa: BLE001 - any failure is the server's state
            self._session = None
            if isinstance(exc, asyncio.CancelledError) and stop.is_set():
                pass
            elif not stop.is_set() and self.auth is not None and self.auth.needs_sign_in:
                self._refused()
            elif not stop.is_set():
                self.state = "disconnected" if was_connected else "failed"
                self.error = self._with_junk(_describe(exc))
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
        finally:
            self._scope = None
            self._session = None
            if self._process is not None and not self._handed:  # stopped before the transport
                with anyio.CancelScope(shield=True):
                    from pi_mcp import stdio

                    await stdio.stop_process(self._process, 0.0)
            self._end_process()  # the last resort, whatever happened above
            if stop.is_set():
                self.state = "idle" if self.config.enabled else "disabled"
            self._ready.set()
            if self.state != self._notified and not self._keeping:
                self._changed()

    def _session_over(self, read: Any, write: Any, own: bool) -> Any:
        """pi-host's own session for a stdio server it spawned, else the SDK's."""
        if own:
            from pi_mcp.session import StdioSession

            return StdioSession(read, write, self.config.timeout, self._on_message)
        from mcp.client.session import ClientSession

        return ClientSession(
            read, write, read_timeout_seconds=self.config.timeout, message_handler=self._on_message
        )

    async def _initialize(self, session: Any) -> None:
        """``initialize`` and the tool list. The server's ``timeout`` counts from the start of the
        connection (the process spawn), so a prompt waiting for a direct server hears of one that
        never answers within that time, whatever the SDK import took."""
        left = self.config.timeout - (time.monotonic() - self._started)
        try:
            with anyio.fail_after(max(left, 0.05)):
                result = await session.initialize()
        except TimeoutError:
            raise TimeoutError(f"no answer to initialize within {self.config.timeout:g}s") from None
        self.instructions = getattr(result, "instructions", None)
        capabilities = getattr(result, "capabilities", None)
        self.resources = getattr(capabilities, "resources", None) is not None
        self.tools = await self._list_tools(session)

    # --- output that is not JSON-RPC -------------------------------------------------------

    def _note_junk(self, line: bytes, problem: str) -> None:
        """A line the server wrote that is not JSON-RPC (skipped, as pi's SDK skips it)."""
        if self.junk is None:
            shown = line[:80].decode("utf-8", "replace")
            self.junk = f"{shown!r}{'…' if len(line) > 80 else ''}" if shown else problem[:200]
        if self.state == "connected":
            self._say_junk()

    def note_sdk(self, message: str) -> None:
        """A warning the SDK logged (with a traceback nobody should see): kept, not printed."""
        if self.sdk_note is None:
            self.sdk_note = " ".join(message.split())[:200]

    def _say_junk(self) -> None:
        """One line per connection once it is up. Lines before it (a banner) are said only when
        the connection then fails, as part of its error."""
        if self.junk is not None and not self._junk_said and self.on_warn is not None:
            self._junk_said = True
            self.on_warn(
                f'MCP server "{self.config.name}" wrote output that is not JSON-RPC (ignored): {self.junk}'
            )

    def _with_junk(self, error: str) -> str:
        return (
            f"{error} (its output is not JSON-RPC: {self.junk})"
            if self.junk and not self._junk_said
            else error
        )

    async def _on_message(self, message: Any) -> None:
        """Server notifications. A changed tool list is listed again, in a task of its own (the
        SDK delivers notifications inline, so this must not wait for a request)."""
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            task = asyncio.ensure_future(self._relist())
            self._relists.add(task)
            task.add_done_callback(self._relists.discard)

    async def _relist(self) -> None:
        """New tools are added and withdrawn ones dropped (the manager re-registers them)."""
        session = self._session
        if session is None or self.state != "connected":
            return
        try:
            tools = await self._list_tools(session)
        except Exception:  # noqa: BLE001 - a server that died is reported by the connection's task
            return
        if self._session is session and self.state == "connected":
            self.tools = tools
            self._changed()

    # --- OAuth ------------------------------------------------------------------------------

    def _refused(self) -> None:
        """The server wants a sign-in (pi's ``needs-auth``): remember which token it refused."""
        self.state, self.error, self.tools = "needs-auth", None, []
        self._token_when_refused = self.auth.stored_token() if self.auth is not None else None

    def credentials_changed(self) -> bool:
        """Waiting for a sign-in, and other credentials were stored since (``pi mcp login``)."""
        if self.state != "needs-auth" or self.auth is None:
            return False
        return self.auth.stored_token() != self._token_when_refused

    def sign_in_hint(self, in_session: bool = False) -> str:
        from pi_mcp.oauth import sign_in_hint

        return sign_in_hint(self.config.name, in_session)

    def _changed(self) -> None:
        self._notified = self.state
        try:
            self.on_change(self)
        except Exception:  # the manager's bookkeeping must not end the connection task
            pass

    @contextlib.asynccontextmanager
    async def _transport(self) -> Any:
        raw = self.config.raw
        name = self.config.name
        if self.config.kind == "http":
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            headers = {k: resolve_value(name, "header", k, v) for k, v in (raw.get("headers") or {}).items()}
            if self.config.uses_oauth and self.auth is None:
                from pi_mcp.oauth import connection_auth

                self.auth = connection_auth(self.config)
            async with create_mcp_http_client(headers=headers, auth=self.auth) as http:
                async with streamable_http_client(raw["url"], http_client=http) as streams:
                    yield streams
            return
        if self._process is not None:
            from pi_mcp import stdio

            def grace() -> float:
                return STOP_GRACE_S if self.state == "connected" else 0.0

            self._handed = True
            async with stdio.open_streams(self._process, self._note_junk, grace, plain=True) as streams:
                yield streams
            return
        import mcp.client.stdio as sdk_stdio

        command, args, env, cwd = self._launch()
        params = sdk_stdio.StdioServerParameters(command=command, args=args, env=env, cwd=cwd)
        sdk_stdio.PROCESS_TERMINATION_TIMEOUT = STOP_GRACE_S
        self._stderr = tempfile.TemporaryFile(prefix="pi-mcp-stderr-")
        async with sdk_stdio.stdio_client(params, errlog=self._stderr) as streams:
            yield streams

    def _launch(self) -> tuple[str, list[str], dict[str, str], str]:
        """Command, arguments, environment and directory of a stdio server. The environment is
        the whole process environment (minus exported shell functions) with the server's ``env``
        over it."""
        raw, name = self.config.raw, self.config.name
        env = {k: v for k, v in os.environ.items() if not k.startswith("()")}
        env.update({k: resolve_value(name, "env", k, v) for k, v in (raw.get("env") or {}).items()})
        cwd = raw.get("cwd")
        cwd = os.path.join(self.cwd, expand_home(cwd)) if isinstance(cwd, str) else self.cwd
        return expand_home(raw["command"]), [expand_home(a) for a in raw.get("args") or []], env, cwd

    def _spawns_here(self) -> bool:
        return self.config.kind != "http" and OWN_STDIO

    async def _spawn(self) -> Any:
        """Start the server process (its own session, stderr to the tail file)."""
        from pi_mcp import stdio

        command, args, env, cwd = self._launch()
        self._stderr = tempfile.TemporaryFile(prefix="pi-mcp-stderr-")
        return await stdio.spawn(command, args, env, cwd, self._stderr)

    async def _list_tools(self, session: Any) -> list[Any]:
        tools: list[Any] = []
        cursor = None
        while True:
            with anyio.fail_after(self.config.timeout):
                page = await _page(session, "list_tools", cursor)
            tools.extend(page.tools)
            cursor = getattr(page, "next_cursor", None)
            if not cursor:
                return tools

    # --- calls ------------------------------------------------------------------------------

    async def _live_session(self) -> Any:
        """The SDK session, after a connection in progress (up to the server's timeout)."""
        if self.state == "connecting":
            await self.wait(self.config.timeout)
        session = self._session
        if self.state == "needs-auth":
            raise RuntimeError(self.sign_in_hint())
        if session is None or self.state != "connected":
            reason = f": {self.error}" if self.error else ""
            raise RuntimeError(f'MCP server "{self.config.name}" is not connected ({self.state}{reason})')
        return session

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """``tools/call``; waits for a connection in progress (up to the server's timeout). A
        call during which the server announced a changed tool list returns once the new list is
        known (the announcement arrives before the result), so the next model call sees it."""
        result = await self.request("call_tool", tool, arguments)
        if self._relists:
            await asyncio.wait(set(self._relists), timeout=self.config.timeout)
        return result

    async def request(self, method: str, *args: Any) -> Any:
        """One request of the SDK session: ``call_tool(name, arguments)``, ``read_resource(uri)``,
        or ``list_resources`` / ``list_resource_templates`` with an optional cursor."""
        session = await self._live_session()
        try:
            if method == "call_tool":
                return await session.call_tool(*args, read_timeout_seconds=self.config.timeout)
            with anyio.fail_after(self.config.timeout):
                if method == "read_resource":
                    return await session.read_resource(*args)
                return await _page(session, method, args[0] if args else None)
        except Exception:
            if self.auth is None or not self.auth.needs_sign_in:
                raise
        # the stored credentials stopped working and could not be refreshed: sign in again
        self._session = None
        self._refused()
        self._changed()
        self._stopping = asyncio.ensure_future(self.stop_keep_state())
        raise RuntimeError(self.sign_in_hint())


async def _page(session: Any, method: str, cursor: str | None) -> Any:
    """One page of a list (``list_tools``, ``list_resources``...), in either session's terms."""
    from pi_mcp.session import StdioSession

    if isinstance(session, StdioSession):
        return await getattr(session, method)(cursor)
    if not cursor:
        return await getattr(session, method)()
    from mcp_types import PaginatedRequestParams

    return await getattr(session, method)(params=PaginatedRequestParams(cursor=cursor))


def _describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, TimeoutError):
        return str(exc) or "timed out"
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    text = str(exc) or type(exc).__name__
    return " ".join(text.split())
