"""What the interactive app does with the session's events beyond drawing them (the feed draws
messages and tool calls): the spinner's state, the queue, retries, compaction, the session name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_mode_interactive.screen_api import Screen


def handle(app: Screen, event: dict[str, Any]) -> None:
    if event.get("type") not in ("message_update", "tool_execution_update"):
        # usage lands at message_end and entries move on compaction and /tree without the
        # message count changing: the footer is computed again after any such event
        app.footer_generation += 1
    handler = HANDLERS.get(event.get("type") or "")
    if app.feed.handle(event) or handler is not None:
        if handler is not None:
            handler(app, event)
        app.invalidate()


def queue_update(app: Screen, event: dict[str, Any]) -> None:
    app.queued = (list(event.get("steering") or []), list(event.get("followUp") or []))


def agent_start(app: Screen, event: dict[str, Any]) -> None:
    app.working, app.status_line, app.working_hint = True, "Working…", "(esc to interrupt)"


def agent_settled(app: Screen, event: dict[str, Any]) -> None:
    app.working = False
    app.feed.settle()


def auto_retry_start(app: Screen, event: dict[str, Any]) -> None:
    seconds = (event.get("delayMs") or 0) / 1000
    app.notice(
        f"Retrying ({event.get('attempt')}/{event.get('maxAttempts')}) in {seconds:g} s: {event.get('errorMessage', '')}",
        "warning",
    )


def compaction_start(app: Screen, event: dict[str, Any]) -> None:
    app.working, app.status_line = True, "Compacting…"


def compaction_end(app: Screen, event: dict[str, Any]) -> None:
    from pi_host.protocol.messages import CompactionSummaryMessage

    app.compactions_ended += 1
    app.working = app.session.is_streaming
    result = event.get("result")
    if isinstance(result, dict) and result.get("summary"):
        summary = CompactionSummaryMessage(
            summary=result["summary"], tokens_before=result.get("tokensBefore") or 0
        )
        app.feed.message_item(summary, done=True)
    elif event.get("errorMessage"):
        app.notice(compaction_error(event["errorMessage"]), "error")
    elif event.get("aborted"):
        app.notice("Compaction aborted", "warning")


def session_info_changed(app: Screen, event: dict[str, Any]) -> None:
    app.session_name = event.get("name")


def compaction_error(message: str) -> str:
    return message if message.startswith("Compaction failed") else f"Compaction failed: {message}"


HANDLERS = {
    "queue_update": queue_update,
    "agent_start": agent_start,
    "agent_settled": agent_settled,
    "auto_retry_start": auto_retry_start,
    "compaction_start": compaction_start,
    "compaction_end": compaction_end,
    "session_info_changed": session_info_changed,
}
