"""The wire to the bridge process: one JSON object per line (docs/typescript-extensions.md).

* pi-host -> bridge: the bridge's stdin (requests, answers to its asynchronous calls, aborts);
* bridge -> pi-host: a pipe of its own (replies, tool updates, calls), so that whatever an
  extension prints (Node's stdout and stderr both go to pi-host's stderr) never mixes with frames;
* pi-host -> bridge: a second pipe carrying only the answers to the bridge's *synchronous*
  calls (pi's getters are synchronous), which the bridge reads with a blocking read.

Two ways to talk, one buffer: while plugins load there is no event loop, so a request blocks
(:meth:`Channel.request_blocking`), answering the bridge's calls as they come; inside a session
the pipe is watched by the event loop (:meth:`Channel.request`). Writes never block the event
loop: the bridge may itself be waiting for a synchronous answer, which only the event loop gives.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import orjson

Frame = dict[str, Any]


class BridgeDead(RuntimeError):
    """The bridge process is gone (or was stopped): what every waiting request gets."""


class BridgeTimeout(RuntimeError):
    """A blocking request got no answer in time."""


def _dumps(frame: Frame) -> bytes:
    return orjson.dumps(frame, default=lambda value: None) + b"\n"


class Channel:
    """One bridge process and its pipes. ``on_frame(frame)`` receives the bridge's calls
    (``call``/``sync`` frames); replies and updates are matched to requests here."""

    def __init__(
        self, argv: list[str], env: dict[str, str], cwd: str, on_frame: Callable[[Frame], None]
    ) -> None:
        out_read, out_write = os.pipe()  # bridge -> pi-host
        sync_read, sync_write = os.pipe()  # pi-host -> bridge, synchronous answers
        env = {**env, "PI_TS_BRIDGE_OUT_FD": str(out_write), "PI_TS_BRIDGE_SYNC_FD": str(sync_read)}
        try:
            stderr_fd = sys.stderr.fileno()
        except (AttributeError, OSError, ValueError):
            stderr_fd = subprocess.DEVNULL  # type: ignore[assignment]
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=stderr_fd,  # an extension's console.log must not reach pi-host's stdout
                stderr=stderr_fd,
                pass_fds=(out_write, sync_read),
                env=env,
                cwd=cwd,
            )
        finally:
            os.close(out_write)
            os.close(sync_read)
        assert self.proc.stdin is not None
        self._stdin = self.proc.stdin.fileno()
        os.set_blocking(self._stdin, False)
        self._out = out_read
        os.set_blocking(self._out, False)
        self._sync = sync_write
        self.on_frame = on_frame
        self._ids = itertools.count(1)
        self._read_buffer = b""
        self._write_buffer = bytearray()
        self._futures: dict[int, tuple[asyncio.Future[Any], Callable[[Any], Any] | None]] = {}
        self._blocking: dict[int, Frame | None] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._writer_on = False
        self.dead: str | None = None
        """Why the bridge is gone (None while it runs)."""

    # --- the event loop -------------------------------------------------------------------------

    def attach(self) -> None:
        """Watch the pipe from the running event loop (a new loop takes over from a closed one)."""
        loop = asyncio.get_running_loop()
        if loop is self._loop or self.dead:
            return
        self._detach()
        self._loop = loop
        loop.add_reader(self._out, self._on_readable)
        if self._write_buffer:
            self._flush()

    def _detach(self) -> None:
        old, self._loop = self._loop, None
        if old is not None and not old.is_closed():
            old.remove_reader(self._out)
            if self._writer_on:
                old.remove_writer(self._stdin)
        self._writer_on = False

    async def request(self, frame: Frame, on_update: Callable[[Any], Any] | None = None) -> Any:
        """Send ``frame`` and wait for its reply's value (a failed reply raises RuntimeError)."""
        if self.dead:
            raise BridgeDead(self.dead)
        self.attach()
        assert self._loop is not None
        ident = frame["id"] = next(self._ids)
        future: asyncio.Future[Any] = self._loop.create_future()
        self._futures[ident] = (future, on_update)
        try:
            self.send(frame)
            return await future
        finally:
            self._futures.pop(ident, None)

    def _on_readable(self) -> None:
        for frame in self._read_available():
            self._route(frame)

    # --- blocking use (while plugins load) -------------------------------------------------------

    def request_blocking(self, frame: Frame, timeout: float | None) -> Any:
        """Send ``frame`` and wait for its reply without an event loop, answering the bridge's
        calls meanwhile; :class:`BridgeTimeout` after ``timeout`` seconds (None: no limit)."""
        if self.dead:
            raise BridgeDead(self.dead)
        ident = frame["id"] = next(self._ids)
        self._blocking[ident] = None
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            self._write_blocking(_dumps(frame), deadline)
            while self._blocking.get(ident) is None:
                if self.dead:
                    raise BridgeDead(self.dead)
                self._wait(deadline, want_write=False)
            reply = self._blocking[ident]
        finally:
            self._blocking.pop(ident, None)
        assert reply is not None
        if not reply.get("ok"):
            raise RuntimeError(reply.get("e") or "the bridge failed")
        return reply.get("v")

    def _wait(self, deadline: float | None, want_write: bool) -> bool:
        """One select round: route what arrived; True when stdin can take more."""
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            raise BridgeTimeout("no answer from the TypeScript bridge in time")
        readable, writable, _ = select.select([self._out], [self._stdin] if want_write else [], [], remaining)
        if readable:
            for frame in self._read_available():
                self._route(frame)
        return bool(writable)

    def _write_blocking(self, data: bytes, deadline: float | None) -> None:
        self._write_buffer += data
        while self._write_buffer and not self.dead:
            if self._wait(deadline, want_write=True):
                self._write_some()

    # --- frames -----------------------------------------------------------------------------------

    def send(self, frame: Frame) -> None:
        """Queue a frame for the bridge; never blocks (the event loop writes the rest)."""
        if self.dead:
            return
        self._write_buffer += _dumps(frame)
        self._flush()

    def _flush(self) -> None:
        self._write_some()
        if self._write_buffer and self._loop is not None and not self._writer_on:
            self._writer_on = True
            self._loop.add_writer(self._stdin, self._on_writable)

    def _on_writable(self) -> None:
        self._write_some()
        if not self._write_buffer and self._loop is not None and self._writer_on:
            self._writer_on = False
            self._loop.remove_writer(self._stdin)

    def _write_some(self) -> None:
        while self._write_buffer:
            try:
                written = os.write(self._stdin, self._write_buffer)
            except BlockingIOError:
                return
            except (BrokenPipeError, OSError):
                self._gone()
                return
            del self._write_buffer[:written]

    def answer(self, ident: int, ok: bool, value: Any = None, error: str | None = None) -> None:
        """Answer one of the bridge's synchronous calls (it is blocked reading this pipe)."""
        frame = {"id": ident, "ok": ok, "v": value} if ok else {"id": ident, "ok": False, "e": error}
        data = _dumps(frame)
        try:
            while data:
                data = data[os.write(self._sync, data) :]
        except OSError:
            self._gone()

    def _read_available(self) -> list[Frame]:
        """The complete frames that arrived; at the end of the pipe, those, then the bridge is gone."""
        chunks: list[bytes] = []
        ended = False
        while True:
            try:
                chunk = os.read(self._out, 1 << 16)
            except BlockingIOError:
                break
            except OSError:
                chunk = b""
            if not chunk:
                ended = True
                break
            chunks.append(chunk)
        frames: list[Frame] = []
        if chunks:
            lines = (self._read_buffer + b"".join(chunks)).split(b"\n")
            self._read_buffer = lines.pop()
            frames = [orjson.loads(line) for line in lines if line]
        if ended:
            for frame in frames:
                self._route(frame)
            self._gone()
            return []
        return frames

    def _route(self, frame: Frame) -> None:
        kind = frame.get("t")
        if kind == "r":
            ident = frame.get("id")
            if ident in self._blocking:
                self._blocking[ident] = frame
                return
            waiting = self._futures.get(ident)
            if waiting is None or waiting[0].done():
                return  # abandoned (a timed-out hook): the late answer is dropped
            if frame.get("ok"):
                waiting[0].set_result(frame.get("v"))
            else:
                waiting[0].set_exception(RuntimeError(frame.get("e") or "the bridge failed"))
        elif kind == "upd":
            waiting = self._futures.get(frame.get("id"))
            if waiting is not None and waiting[1] is not None:
                self.on_frame({"t": "upd", "cb": waiting[1], "v": frame.get("v")})
        elif kind in ("call", "sync"):
            self.on_frame(frame)

    def busy(self) -> bool:
        """Requests are waiting for their reply."""
        return bool(self._futures) or bool(self._blocking)

    def fail_all(self, error: BaseException) -> None:
        """Every waiting request raises ``error``."""
        for future, _ in list(self._futures.values()):
            if not future.done():
                future.set_exception(error)

    # --- the end ------------------------------------------------------------------------------------

    def _gone(self) -> None:
        if self.dead:
            return
        code = None
        try:
            code = self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            pass
        self.dead = (
            f"the TypeScript bridge exited (code {code})"
            if code is not None
            else "the TypeScript bridge closed its pipe"
        )
        self._detach()
        for future, _ in list(self._futures.values()):
            if not future.done():
                future.set_exception(BridgeDead(self.dead))

    def close(self, kill_after: float = 2.0) -> None:
        """Ask the bridge to exit (its stdin closes), then kill it if it lingers."""
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=kill_after)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.dead = self.dead or "the TypeScript bridge was stopped"
        self._detach()
        for future, _ in list(self._futures.values()):
            if not future.done():
                future.set_exception(BridgeDead(self.dead))
        for fd in (self._out, self._sync):
            try:
                os.close(fd)
            except OSError:
                pass
