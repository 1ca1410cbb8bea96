"""pi-host's own stdio transport for MCP servers (POSIX): the server process and the two message
streams a session reads and writes (pi-host's own :mod:`pi_mcp.session`; the SDK's
``ClientSession`` where a caller still wants it).

pi-host used the SDK's ``stdio_client``; three things made it its own:

* **Size.** The SDK joins each 64 KiB read onto the text received so far and splits the whole
  again, so a message costs time quadratic in its size (a 50 MB tool result took minutes and
  timed out). Here bytes are appended to a ``bytearray`` and only the new part is searched for
  the newline; a line is parsed by ``orjson`` and validated as Python data (a 100 MB line: about
  a quarter of a second, against two and a half for the SDK's JSON validation).
* **Bad output.** The SDK logs a traceback for each line that is not JSON-RPC. Here such a line
  is handed to ``on_junk`` (the connection says one line about it) and skipped, as pi's SDK
  skips it.
* **The process.** It is spawned here (while the SDK imports), so it is known from the start:
  :func:`stop_process` always ends its whole process group, and :func:`kill_leftovers` runs at
  exit for any group a stop did not reach (a run that ends while a server is still starting).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import orjson

MAX_MESSAGE_BYTES = 256 * 1024 * 1024
"""A line longer than this ends the connection: a server that never writes a newline."""
TERM_WAIT_S = 2.0
"""How long the process group has after SIGTERM before SIGKILL."""
_POLL_S = 0.01

_live: set[Any] = set()
"""Processes spawned here and not yet seen dead: killed at exit if still there."""


async def spawn(command: str, args: list[str], env: dict[str, str], cwd: str, errlog: Any) -> Any:
    """Start a server in its own session (so its whole tree can be signalled as one group)."""
    process = await anyio.open_process(
        [command, *args], env=env, stderr=errlog, cwd=cwd, start_new_session=True
    )
    _live.add(process)
    return process


def _signal_group(process: Any, sig: int) -> bool:
    """Signal the server's process group; False when nothing of it is left. The leader's pid is
    the group id (``start_new_session``), valid while any member lives even after the leader
    was reaped."""
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # some member we may not signal: still there
    return True


async def _wait_exit(process: Any, seconds: float) -> bool:
    """Wait for the leader to exit (``returncode`` polled: ``wait()`` also waits for the pipes,
    which a child that inherited them keeps open)."""
    with anyio.move_on_after(seconds):
        while process.returncode is None:
            await anyio.sleep(_POLL_S)
    return process.returncode is not None


async def _wait_group_gone(process: Any, seconds: float) -> bool:
    with anyio.move_on_after(seconds):
        while _signal_group(process, 0):
            _ = process.returncode  # lets the event loop reap the leader
            await anyio.sleep(_POLL_S)
        return True
    return False


async def stop_process(process: Any, grace: float) -> None:
    """Close the server's stdin, give it ``grace`` seconds to exit, then end its whole process
    group: SIGTERM, SIGKILL :data:`TERM_WAIT_S` later. Every wait is bounded."""
    with contextlib.suppress(Exception):
        await process.stdin.aclose()
    if grace > 0:
        await _wait_exit(process, grace)
    if _signal_group(process, signal.SIGTERM) and not await _wait_group_gone(process, TERM_WAIT_S):
        _signal_group(process, signal.SIGKILL)
        await _wait_group_gone(process, 1.0)
    await _wait_exit(process, 1.0)
    with anyio.move_on_after(1.0), contextlib.suppress(Exception):
        await process.aclose()  # the pipes and the transport, not left to the garbage collector
    if process.returncode is not None:
        _live.discard(process)


def kill_group(process: Any) -> None:
    """SIGKILL the server's process group at once (a stop that did not finish). Only while the
    leader is not reaped: after that its pid, and so the group id, may belong to another."""
    if process.returncode is None:
        _signal_group(process, signal.SIGKILL)


@atexit.register
def kill_leftovers() -> None:
    """At exit, the groups of servers no stop reached (a run that ended while one was starting)."""
    for process in list(_live):
        kill_group(process)
    _live.clear()


def _parser(on_junk: Callable[[bytes, str], None], plain: bool) -> Callable[[memoryview], Any]:
    if plain:
        from pi_mcp.session import is_jsonrpc

        def validate(data: Any) -> Any:
            if not is_jsonrpc(data):
                raise ValueError("not a JSON-RPC 2.0 message")
            return data

    else:
        from mcp_types import jsonrpc_message_adapter

        def validate(data: Any) -> Any:
            return jsonrpc_message_adapter.validate_python(data, by_name=False)

    def parse(line: memoryview) -> Any:
        """One line (a view into the read buffer: a 100 MB message is not copied to be parsed)."""
        if len(line) < 64 and not bytes(line).strip():
            return None
        try:
            return validate(orjson.loads(line))
        except ValueError as exc:  # orjson's and pydantic's errors are both ValueErrors
            on_junk(bytes(line[:81]).rstrip(b"\r"), " ".join(str(exc).split()))
            return None

    return parse


@contextlib.asynccontextmanager
async def open_streams(
    process: Any, on_junk: Callable[[bytes, str], None], grace: Callable[[], float], *, plain: bool = False
) -> AsyncIterator[tuple[Any, Any]]:
    """The ``(read, write)`` streams of a session over the process's stdout and stdin: JSON-RPC
    messages as dicts for pi-host's own :class:`pi_mcp.session.StdioSession` (``plain``), else
    the SDK's ``SessionMessage`` objects for its ``ClientSession``. On leaving, the process is
    stopped (:func:`stop_process` with ``grace()`` seconds), shielded from cancellation so a
    stop while the server is starting cannot leave it running."""
    if plain:

        def wrap(message: Any) -> Any:
            return message

        def encode(item: Any) -> bytes:
            return orjson.dumps(item) + b"\n"

    else:
        from mcp.shared.message import SessionMessage

        wrap = SessionMessage

        def encode(item: Any) -> bytes:
            return item.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"

    parse = _parser(on_junk, plain)
    read_send, read_receive = anyio.create_memory_object_stream[Any](0)
    write_send, write_receive = anyio.create_memory_object_stream[Any](0)

    async def reader() -> None:
        buffer = bytearray()
        scanned = 0
        try:
            async with read_send:
                async for chunk in process.stdout:
                    buffer += chunk
                    while (end := buffer.find(b"\n", scanned)) >= 0:
                        with memoryview(buffer) as view, view[:end] as line:
                            message = parse(line)
                        del buffer[: end + 1]
                        scanned = 0
                        if message is not None:
                            await read_send.send(wrap(message))
                    scanned = len(buffer)
                    if scanned > MAX_MESSAGE_BYTES:
                        on_junk(bytes(buffer[:80]), f"a message over {MAX_MESSAGE_BYTES >> 20} MiB")
                        return
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError):
            pass

    async def writer() -> None:
        try:
            async with write_receive:
                async for item in write_receive:
                    await process.stdin.send(encode(item))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_send.aclose()  # the server stopped reading: the session sees the end

    async with anyio.create_task_group() as group:
        group.start_soon(reader)
        group.start_soon(writer)
        try:
            yield read_receive, write_send
        finally:
            with anyio.CancelScope(shield=True):
                await stop_process(process, grace())
                for stream in (read_send, read_receive, write_send, write_receive):
                    await stream.aclose()
            group.cancel_scope.cancel()  # a reader a surviving descendant keeps waiting
