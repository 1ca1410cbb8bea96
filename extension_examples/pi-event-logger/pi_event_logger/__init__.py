"""pi-event-logger: every session event as one JSON line, for debugging and auditing runs.

Where: ``--event-log PATH``, else ``$PI_EVENT_LOG``, else ``<agent dir>/logs/events-<session id>.jsonl``
(one file per session; with a fixed path every session appends to it, each line names its
session). The file is created with mode 0600.

What: one record per event the host fires, ``{"ts", "seq", "session", "type", ...}``: the run
events through ``on_event`` (agent, turn, message, tool execution, queue, compaction, retry,
entries, session name) and the lifecycle hooks that are not session events (``session_start``,
``session_shutdown``, ``session_compact(_failed)``, ``session_tree``, ``model_select``,
``thinking_level_select``, ``ui_prompt_start/end``). Streamed deltas (``message_update``,
``tool_execution_update``) are counted, not written: the ``message_end`` / ``tool_execution_end``
record carries the counts. Secrets are redacted (see :mod:`pi_event_logger.records`).

Never in the way: records are small and written unbuffered to one open file; the first error
writing the file is reported once (a notice in the terminal UI, a line on stderr otherwise) and
logging stops for the rest of the process. Nothing raised here reaches the host.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import UTC, datetime
from typing import Any

from pi_host import hookimpl
from pi_host.plugins.registrations import CliFlag

__version__ = "0.1.0"

ENV = "PI_EVENT_LOG"
FLAG = "event-log"
COUNTED = {"message_update", "tool_execution_update"}


class EventLog:
    """One session's log file (opened on the first record) and the counters between records."""

    def __init__(self, path: str, session_id: str, secrets: list[str]) -> None:
        from .records import Cleaner

        self.path = path
        self.session_id = session_id
        self.cleaner = Cleaner(secrets)
        self.handle: Any = None
        self.seq = 0
        self.updates: dict[str, int] = {}
        self.delta_chars = 0
        self.tool_updates: dict[str, int] = {}
        self.turn_index = -1
        self.turn_started: float | None = None

    def record(self, kind: str, event: dict[str, Any]) -> dict[str, Any] | None:
        """The record for ``event`` (None for a counted delta)."""
        from .records import summarise

        if kind == "message_update":
            self.count(event)
            return None
        if kind == "tool_execution_update":
            call = str(event.get("toolCallId"))
            self.tool_updates[call] = self.tool_updates.get(call, 0) + 1
            return None
        fields = summarise(kind, event, self.cleaner)
        if kind == "message_start":
            self.updates, self.delta_chars = {}, 0
        elif kind == "message_end" and self.updates:
            fields["updates"], fields["deltaChars"] = self.updates, self.delta_chars
            self.updates, self.delta_chars = {}, 0
        elif kind == "tool_execution_end":
            fields["updates"] = self.tool_updates.pop(str(event.get("toolCallId")), 0)
        elif kind == "turn_start":
            self.turn_index += 1
            self.turn_started = time.monotonic()
            fields["turnIndex"] = self.turn_index
        elif kind == "turn_end":
            fields["turnIndex"] = self.turn_index
            if self.turn_started is not None:
                fields["durationMs"] = round((time.monotonic() - self.turn_started) * 1000)
        now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        record = {"ts": now, "seq": self.seq, "session": self.session_id, "type": kind, **fields}
        self.seq += 1
        return record

    def count(self, event: dict[str, Any]) -> None:
        """A ``message_update``: counted by kind, its delta's length added up."""
        inner = event.get("assistantMessageEvent")
        if isinstance(inner, dict):
            sub, delta = inner.get("type", "?"), inner.get("delta")
        else:
            sub, delta = getattr(inner, "type", "?"), getattr(inner, "delta", None)
        self.updates[sub] = self.updates.get(sub, 0) + 1
        if type(delta) is str:
            self.delta_chars += len(delta)

    def write(self, record: dict[str, Any]) -> None:
        """Append one line; an OSError propagates (the caller stops logging)."""
        import json

        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str) + "\n"
        if self.handle is None:
            os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            self.handle = os.fdopen(fd, "w", encoding="utf-8", buffering=1)
        self.handle.write(line)

    def close(self) -> None:
        if self.handle is not None:
            try:
                self.handle.close()
            except OSError:
                pass
            self.handle = None


class Logger:
    """The plugin's state: the open logs by session id, and whether logging has stopped."""

    def __init__(self) -> None:
        self.logs: dict[str, EventLog] = {}
        self.stopped: str | None = None
        """Why logging stopped (the one error reported), or None while it runs."""
        self.last: tuple[Any, EventLog] | None = None
        """The ctx and log of the last record: deltas (many, between a message's start and end)
        go to it without looking the session up again."""

    def delta(self, event: Any, ctx: Any) -> None:
        """A ``message_update``, the one event that comes by the thousand: count it, cheaply."""
        if self.stopped is not None:
            return
        last = self.last
        try:
            (last[1] if last is not None and last[0] is ctx else self.log_for(ctx)).count(event)
        except Exception as exc:
            self.stop(ctx, f"pi-event-logger: {type(exc).__name__}: {exc}; event logging is off")

    def log_for(self, ctx: Any) -> EventLog | None:
        session = getattr(ctx, "session", None)
        session_id = str(getattr(session, "session_id", None) or f"process-{os.getpid()}")
        log = self.logs.get(session_id)
        if log is None:
            from .records import known_secrets

            agent = _agent_dir(ctx)
            log = self.logs[session_id] = EventLog(
                log_path(ctx, session_id, agent), session_id, known_secrets(agent_dir=agent)
            )
        return log

    def handle(self, kind: str, event: Any, ctx: Any, extra: Any = None) -> None:
        """Write ``event`` (plus ``extra(ctx)``'s fields) to the session's log; never raises."""
        if self.stopped is not None:
            return
        log = None
        try:
            log = self.log_for(ctx)
            if log is None:
                return
            self.last = (ctx, log)
            try:
                record = log.record(kind, event if isinstance(event, dict) else {})
            except Exception as exc:  # an event we cannot summarise still leaves a trace
                record = {"ts": None, "seq": log.seq, "session": log.session_id, "type": kind}
                record["logError"] = f"{type(exc).__name__}: {exc}"[:200]
                log.seq += 1
            if record is None:
                return
            if extra is not None:
                record.update(extra(ctx))
            log.write(record)
        except OSError as exc:
            self.stop(
                ctx, f"pi-event-logger: cannot write {getattr(log, 'path', '?')}: {exc}; event logging is off"
            )
        except Exception as exc:
            self.stop(ctx, f"pi-event-logger: {type(exc).__name__}: {exc}; event logging is off")

    def stop(self, ctx: Any, why: str) -> None:
        self.stopped = why
        for log in self.logs.values():
            log.close()
        _report(ctx, why)

    def close(self, ctx: Any) -> None:
        session_id = str(getattr(getattr(ctx, "session", None), "session_id", None) or "")
        log = self.logs.pop(session_id, None)
        if log is not None:
            log.close()
        self.last = None


def _agent_dir(ctx: Any) -> str:
    from pi_host.lib.toolkit import agent_dir

    return agent_dir(ctx)


def log_path(ctx: Any, session_id: str, agent_dir: str | None = None) -> str:
    """``--event-log``, else ``$PI_EVENT_LOG``, else ``<agent dir>/logs/events-<session id>.jsonl``."""
    chosen = None
    get_flag = getattr(ctx, "get_flag", None)
    if callable(get_flag):
        chosen = get_flag(FLAG)
    chosen = chosen or os.environ.get(ENV)
    if chosen:
        return os.path.abspath(os.path.expanduser(str(chosen)))
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)
    return os.path.join(agent_dir or _agent_dir(ctx), "logs", f"events-{safe}.jsonl")


def _report(ctx: Any, text: str) -> None:
    try:
        if ctx is not None and getattr(ctx, "has_ui", False):
            ctx.ui.notify(text, "warning")
            return
    except Exception:
        pass
    print(text, file=sys.stderr, flush=True)


_logger = Logger()


def _about(ctx: Any) -> dict[str, Any]:
    """What ``session_start`` adds: where, how and with which model the session runs."""
    from .records import model_key

    return {
        "cwd": getattr(ctx, "cwd", None),
        "mode": getattr(ctx, "mode", None),
        "model": model_key(getattr(ctx, "model", None)),
        "thinkingLevel": getattr(ctx, "thinking_level", None),
        "pid": os.getpid(),
    }


# --- hooks ----------------------------------------------------------------------------------


@hookimpl
def register_cli_flags():
    return [
        CliFlag(name=FLAG, type="string", description="pi-event-logger: write the event log to this file")
    ]


@hookimpl(trylast=True)
def on_event(event, ctx):
    kind = event.get("type")
    if kind == "message_update":
        _logger.delta(event, ctx)
    else:
        _logger.handle(str(kind or "event"), event, ctx)


@hookimpl(trylast=True)
def on_session_start(event, ctx):
    _logger.handle("session_start", event, ctx, extra=_about)


@hookimpl(trylast=True)
def on_session_shutdown(event, ctx):
    _logger.handle("session_shutdown", event, ctx)
    _logger.close(ctx)


@hookimpl(trylast=True)
def on_session_compact(event, ctx):
    _logger.handle("session_compact", event, ctx)


@hookimpl(trylast=True)
def on_session_compact_failed(event, ctx):
    _logger.handle("session_compact_failed", event, ctx)


@hookimpl(trylast=True)
def on_session_tree(event, ctx):
    _logger.handle("session_tree", event, ctx)


@hookimpl(trylast=True)
def on_model_select(event, ctx):
    _logger.handle("model_select", event, ctx)


@hookimpl(trylast=True)
def on_thinking_level_select(event, ctx):
    _logger.handle("thinking_level_select", event, ctx)


@hookimpl(trylast=True, optionalhook=True)
def on_ui_prompt_start(event, ctx):
    _logger.handle("ui_prompt_start", event, ctx)


@hookimpl(trylast=True, optionalhook=True)
def on_ui_prompt_end(event, ctx):
    _logger.handle("ui_prompt_end", event, ctx)
