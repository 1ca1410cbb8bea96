"""pi-custom-footer: a one-line footer and a compact renderer for the ``bash`` tool.

The footer (``FooterRenderer``) shows ``model · ↑in ↓out · $cost · ctx% · turn time · ⎇ branch``
on one line, dropping the least useful parts first when the terminal is narrow. The ``bash``
renderer (``ToolRenderer``) draws ``$ command``, the last lines of the output behind a gutter
coloured by the exit status, and ``✓ exit 0 · 0.4s`` / ``✗ exit 3 · 0.4s``.

What the footer's ``FooterInfo`` does not carry (how long the turn took) and what a tool
result's view does not carry (the exit code, the duration) this plugin records from the run's
hooks. The interactive mode draws the footer again only when something in ``FooterInfo``
changed, so the turn time travels as the plugin's own status entry (``ctx.ui.set_status``),
refreshed once a second while the agent works; the footer shows it in its place instead of
among the other statuses.

The drawing code is imported on the first render (:mod:`pi_custom_footer.render`).
"""

from __future__ import annotations

import time
from typing import Any

from pi_host import hookimpl
from pi_host.plugins.registrations import FooterRenderer, ToolRenderer

__version__ = "0.1.0"

STATUS_KEY = "custom-footer.timer"
TICK_SECONDS = 1.0


class Timings:
    """What the hooks saw: the current turn and run, each tool call's duration and exit code."""

    def __init__(self) -> None:
        self.turn_started: float | None = None
        self.last_turn: float | None = None
        self.running = False
        self.tool_started: dict[str, float] = {}
        self.tool_seconds: dict[str, float] = {}
        self.exit_codes: dict[str, int] = {}
        self.ticker: Any = None

    def turn_text(self, now: float | None = None) -> str | None:
        """``turn 1.2s`` (running: ``turn 1.2s…``), or None before the first turn."""
        now = time.monotonic() if now is None else now
        if self.running and self.turn_started is not None:
            return f"turn {format_seconds(now - self.turn_started)}…"
        if self.last_turn is not None:
            return f"turn {format_seconds(self.last_turn)}"
        return None


def format_seconds(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s"


timings = Timings()


def _publish(ctx: Any) -> None:
    """Put the turn time where the footer finds it (a change draws the footer again)."""
    text = timings.turn_text()
    ui = getattr(ctx, "ui", None)
    if ui is not None and text is not None and getattr(ctx, "has_ui", False):
        ui.set_status(STATUS_KEY, text)


async def _tick(ctx: Any) -> None:
    import asyncio

    while timings.running:
        _publish(ctx)
        await asyncio.sleep(TICK_SECONDS)


def _stop_ticker() -> None:
    if timings.ticker is not None:
        timings.ticker.cancel()
        timings.ticker = None


# --- renderers ------------------------------------------------------------------------------


def render_footer(info, rc):
    from .render import footer

    return footer(info, rc, timings)


def render_bash_call(call, rc):
    from .render import bash_call

    return bash_call(call, rc, timings)


def render_bash_result(call, result, rc):
    from .render import bash_result

    return bash_result(call, result, rc, timings)


@hookimpl
def register_renderers():
    return [
        FooterRenderer(render=render_footer),
        ToolRenderer(tool="bash", render_call=render_bash_call, render_result=render_bash_result),
    ]


# --- what the renderers cannot see ------------------------------------------------------------


@hookimpl
def on_agent_start(event, ctx):
    timings.running = True
    if getattr(ctx, "mode", None) == "interactive" and getattr(ctx, "has_ui", False):
        import asyncio

        _stop_ticker()
        try:
            timings.ticker = asyncio.get_running_loop().create_task(_tick(ctx))
        except RuntimeError:  # no running loop (a synchronous caller): no live ticking
            timings.ticker = None


@hookimpl
def on_turn_start(event, ctx):
    timings.turn_started = time.monotonic()
    _publish(ctx)


@hookimpl
def on_turn_end(event, ctx):
    if timings.turn_started is not None:
        timings.last_turn = time.monotonic() - timings.turn_started


@hookimpl
def on_agent_settled(event, ctx):
    timings.running = False
    _stop_ticker()
    _publish(ctx)


@hookimpl
def on_tool_execution_start(event, ctx):
    if event.get("toolName") == "bash":
        timings.tool_started[str(event.get("toolCallId"))] = time.monotonic()


@hookimpl
def on_tool_execution_end(event, ctx):
    if event.get("toolName") != "bash":
        return
    call_id = str(event.get("toolCallId"))
    started = timings.tool_started.pop(call_id, None)
    if event.get("durationMs") is not None:
        timings.tool_seconds[call_id] = event["durationMs"] / 1000
    elif started is not None:
        timings.tool_seconds[call_id] = time.monotonic() - started
    result = event.get("result")
    structured = getattr(result, "structured_content", None)
    if structured is None and isinstance(result, dict):
        structured = result.get("structuredContent")
    code = structured.get("exit_code") if isinstance(structured, dict) else None
    if isinstance(code, int):
        timings.exit_codes[call_id] = code
