"""What the bridge asks of pi-host on an extension's behalf: pi's ``ctx`` and ``pi.*`` members,
each mapped onto pi-host's own ``ctx`` (:class:`pi_host.runtime.extension_api.ExtensionApi`).

``sync`` frames (pi's synchronous getters) are answered at once on the answer pipe. ``call``
frames run in order as they arrive: the quick ones right here (so ``pi.appendEntry`` then
``getEntries()`` sees the entry, and ``ctx.abort()`` inside a ``turn_end`` handler lands before
the next turn), the ones that wait (dialogs, model calls, session changes) as tasks whose result
goes back as a reply. A call with id 0 wants no reply: its failure is reported under the
extension's name.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from pi_ts_bridge import ops
from pi_ts_bridge.extension import BridgeRuntime
from pi_ts_bridge.wire import to_wire


class NoSession(RuntimeError):
    pass


def handle(runtime: BridgeRuntime, frame: dict[str, Any]) -> None:
    op, args, ident = frame.get("op", ""), frame.get("a") or [], frame.get("id", 0)
    extension = runtime.extensions.get(frame.get("x") or "")
    channel = runtime.channel
    if channel is None:
        return
    if frame.get("t") == "sync":
        getter = ops.SYNC.get(op)
        try:
            if getter is None:
                raise RuntimeError(f"{op} is not supported by pi-host's bridge")
            value = getter(runtime, extension, *args)
        except Exception as exc:
            channel.answer(ident, False, error=_message(op, exc))
            return
        channel.answer(ident, True, to_wire(value))
        return
    action: Callable[..., Any] | None = ops.CALLS.get(op)
    if action is None:
        _fail(runtime, extension, ident, op, RuntimeError(f"{op} is not supported by pi-host's bridge"))
        return
    needs_session = op not in ops.WITHOUT_SESSION
    ctx = runtime.ctx
    if needs_session and (ctx is None or not hasattr(ctx, "session")):
        if ident == 0:
            runtime.deferred.append(frame)  # an extension's factory: runs once a session exists
        else:
            _fail(
                runtime, extension, ident, op, NoSession(f"{op} needs a session (not while extensions load)")
            )
        return
    try:
        result = action(runtime, extension, *args)
    except Exception as exc:
        _fail(runtime, extension, ident, op, exc)
        return
    if inspect.isawaitable(result):
        task = asyncio.ensure_future(result)
        task.add_done_callback(lambda done: _finished(runtime, extension, ident, op, done))
    elif ident:
        channel.send({"t": "r", "id": ident, "ok": True, "v": to_wire(result)})


def _finished(runtime: BridgeRuntime, extension: Any, ident: int, op: str, task: asyncio.Future[Any]) -> None:
    if task.cancelled():
        _fail(runtime, extension, ident, op, RuntimeError("cancelled"))
        return
    error = task.exception()
    if error is not None:
        _fail(runtime, extension, ident, op, error)
    elif ident and runtime.channel is not None:
        runtime.channel.send({"t": "r", "id": ident, "ok": True, "v": to_wire(task.result())})


def _fail(runtime: BridgeRuntime, extension: Any, ident: int, op: str, error: BaseException) -> None:
    if ident and runtime.channel is not None:
        runtime.channel.send({"t": "r", "id": ident, "ok": False, "e": _message(op, error)})
        return
    name = extension.name if extension is not None else "ts-bridge"
    runtime.host.report(name, op, _message(op, error))


def _message(op: str, error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return (
        text
        if isinstance(error, (RuntimeError, ValueError, LookupError))
        else f"{type(error).__name__}: {text}"
    )
