"""One connection to one MCP server, through the official ``mcp`` SDK (imported here only).

A connection lives in its own task: it opens the transport (stdio or streamable HTTP), runs
``initialize`` and ``tools/list``, then waits until it is stopped or the server goes away. Tool
calls come from other tasks through :meth:`Connection.call`, which waits for the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import anyio

from pi_mcp.config import ServerConfig, expand_home, resolve_value

STDERR_TAIL = 20
STOP_GRACE_S = 1.0
"""How long a stopping stdio server has after its stdin closes before SIGTERM (then SIGKILL)."""
IMPORT_SWITCH_INTERVAL_S = 0.0001
"""The interpreter's thread switch interval while the SDK imports in its thread (default 5 ms)."""

_sdk: asyncio.Future[None] | None = None
_adoptable: contextvars.ContextVar[Any] = contextvars.ContextVar("pi_mcp_adoptable", default=None)
"""A server process started before the SDK finished importing, for ``stdio_client`` to take."""


def _let_stdio_client_adopt(stdio: Any) -> bool:
    """Make the SDK's ``stdio_client`` take a process started early (:meth:`Connection._spawn`)
    instead of spawning one itself. The SDK spawns through ``_create_platform_compatible_process``;
    when a later SDK has no such function, early processes are stopped and the SDK spawns."""
    spawn = getattr(stdio, "_create_platform_compatible_process", None)
    if spawn is None:
        return False
    if getattr(spawn, "_pi_adopts", False):
        return True

    async def adopt_or_spawn(*args: Any, **kwargs: Any) -> Any:
        process = _adoptable.get()
        if process is not None:
            _adoptable.set(None)
            return process
        return await spawn(*args, **kwargs)

    adopt_or_spawn._pi_adopts = True  # type: ignore[attr-defined]
    stdio._create_platform_compatible_process = adopt_or_spawn
    return True


def _import_sdk() -> None:
    import mcp.client.session  # noqa: F401
    import mcp.client.stdio  # noqa: F401


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
    def __init__(self, config: ServerConfig, cwd: str, on_change: Callable[[Connection], Any]) -> None:
        self.config = config
        self.cwd = cwd
        self.on_change = on_change
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

    # --- life -------------------------------------------------------------------------------

    def start(self) -> None:
        if not self.config.enabled or (self._task is not None and not self._task.done()):
            return
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self.state, self.error, self.tools = "connecting", None, []
        if self.auth is not None:
            self.auth.needs_sign_in = False
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        if self._stop is not None:
            self._stop.set()
        if self.state != "connected":  # still starting: no grace period for a server nobody used
            if _sdk is not None and _sdk.done():
                import mcp.client.stdio as stdio

                stdio.PROCESS_TERMINATION_TIMEOUT = 0.0
            task.cancel()
        done, _pending = await asyncio.wait({task}, timeout=6)
        if not done:
            task.cancel()
            await asyncio.wait({task}, timeout=2)
        if task.done() and not task.cancelled():
            task.exception()  # retrieved: the state already says what happened

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
        _adoptable.set(None)  # (a task started from another connection's task inherits its value)
        early = asyncio.ensure_future(self._spawn()) if self._spawns_early() else None
        try:
            await load_sdk()
        except BaseException:
            await _discard(early)
            raise
        import mcp.client.stdio as stdio
        from mcp.client.session import ClientSession

        stdio.PROCESS_TERMINATION_TIMEOUT = STOP_GRACE_S
        if early is not None:
            try:
                process = await _settled(early)
            except BaseException:  # stopped while the process was still starting
                await _discard(early)
                raise
            if process is not None and _let_stdio_client_adopt(stdio):
                _adoptable.set(process)
            elif process is not None:
                await _discard(early)

        assert self._stop is not None
        stop = self._stop
        was_connected = False
        try:
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
                    async with ClientSession(
                        relay_receive,
                        write,
                        read_timeout_seconds=self.config.timeout,
                        message_handler=self._on_message,
                    ) as session:
                        with anyio.fail_after(self.config.timeout):
                            result = await session.initialize()
                        self.instructions = getattr(result, "instructions", None)
                        capabilities = getattr(result, "capabilities", None)
                        self.resources = getattr(capabilities, "resources", None) is not None
                        self.tools = await self._list_tools(session)
                        self._session = session
                        self.state, was_connected = "connected", True
                        self._ready.set()
                        self._changed()
                        stopped = asyncio.ensure_future(stop.wait())
                        ended = asyncio.ensure_future(closed.wait())
                        await asyncio.wait({stopped, ended}, return_when=asyncio.FIRST_COMPLETED)
                        stopped.cancel()
                        ended.cancel()
                        self._session = None
                        if not stop.is_set():
                            self.state, self.error = "disconnected", "connection closed"
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
                self.error = _describe(exc)
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
        finally:
            leftover = _adoptable.get()
            if leftover is not None:  # the transport never took it (it failed first)
                _adoptable.set(None)
                _kill(leftover)
            self._session = None
            if stop.is_set():
                self.state = "idle" if self.config.enabled else "disabled"
            self._ready.set()
            if self.state != self._notified and not self._keeping:
                self._changed()

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
        from mcp.client.stdio import StdioServerParameters, stdio_client

        command, args, env, cwd = self._launch()
        params = StdioServerParameters(command=command, args=args, env=env, cwd=cwd)
        if _adoptable.get() is None:
            self._stderr = tempfile.TemporaryFile(prefix="pi-mcp-stderr-")
        async with stdio_client(params, errlog=self._stderr) as streams:
            yield streams

    def _launch(self) -> tuple[str, list[str], dict[str, str], str]:
        """Command, arguments, environment and directory of a stdio server. The environment is
        the whole process environment (minus exported shell functions) with the server's ``env``
        over it, a superset of what the SDK inherits, so its merge leaves it as it is."""
        raw, name = self.config.raw, self.config.name
        env = {k: v for k, v in os.environ.items() if not k.startswith("()")}
        env.update({k: resolve_value(name, "env", k, v) for k, v in (raw.get("env") or {}).items()})
        cwd = raw.get("cwd")
        cwd = os.path.join(self.cwd, expand_home(cwd)) if isinstance(cwd, str) else self.cwd
        return expand_home(raw["command"]), [expand_home(a) for a in raw.get("args") or []], env, cwd

    def _spawns_early(self) -> bool:
        return self.config.kind != "http" and os.name == "posix" and (_sdk is None or not _sdk.done())

    async def _spawn(self) -> Any:
        """Start the server process as the SDK would on POSIX (its own session, stderr to the
        tail file); None when that fails, and the SDK then tries and reports it itself."""
        try:
            command, args, env, cwd = self._launch()
            self._stderr = tempfile.TemporaryFile(prefix="pi-mcp-stderr-")
            return await anyio.open_process(
                [command, *args], env=env, stderr=self._stderr, cwd=cwd, start_new_session=True
            )
        except (OSError, ValueError, RuntimeError):
            return None

    async def _list_tools(self, session: Any) -> list[Any]:
        tools: list[Any] = []
        cursor = None
        while True:
            with anyio.fail_after(self.config.timeout):
                if cursor is None:
                    page = await session.list_tools()
                else:
                    from mcp_types import PaginatedRequestParams

                    page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor))
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
                if args and args[0]:
                    from mcp_types import PaginatedRequestParams

                    return await getattr(session, method)(params=PaginatedRequestParams(cursor=args[0]))
                return await getattr(session, method)()
        except Exception:
            if self.auth is None or not self.auth.needs_sign_in:
                raise
        # the stored credentials stopped working and could not be refreshed: sign in again
        self._session = None
        self._refused()
        self._changed()
        self._stopping = asyncio.ensure_future(self.stop_keep_state())
        raise RuntimeError(self.sign_in_hint())


def _describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, asyncio.TimeoutError):
        return "timed out"
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    text = str(exc) or type(exc).__name__
    return " ".join(text.split())


async def _settled(task: asyncio.Future[Any]) -> Any:
    try:
        return await task
    except Exception:  # noqa: BLE001 - the SDK spawns again and reports the failure
        return None


def _kill(process: Any) -> None:
    with contextlib.suppress(ProcessLookupError, OSError):
        os.killpg(process.pid, 9)


async def _discard(early: asyncio.Future[Any] | None) -> None:
    """Stop a process started early that nobody will use."""
    if early is None:
        return
    if not early.done():
        early.cancel()
    with contextlib.suppress(BaseException):
        process = await early
        if process is not None:
            _kill(process)
            await process.aclose()
