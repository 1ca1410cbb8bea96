"""The transcript: what is still live at the bottom of the screen, and what goes to scrollback.

Each message or tool call is an :class:`Item`. Items are rendered in order; the first live item may
hand over its *stable* leading lines (a renderer's ``Rendered.stable``) to the terminal's
scrollback while it still streams, and a finished item hands over everything and leaves. Later
items wait for the ones before them, so scrollback keeps the order of events.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pi_host.lib.render import (
    RenderContext,
    Rendered,
    ToolCallView,
    ToolResultView,
    default_message,
    default_tool_call,
    default_tool_result,
    safe_for_terminal,
)


class Renderers:
    """The registered renderers by key; the last registration wins and one that raises falls back
    to the registration before it, then to the default (each failure reported once)."""

    def __init__(self, host: Any, report: Callable[[str], None]) -> None:
        from pi_host.plugins.registrations import FooterRenderer, MessageRenderer, ToolRenderer

        self._report = report
        self._failed: set[int] = set()
        self.messages: dict[tuple[str | None, str | None], list[tuple[str, Any]]] = {}
        self.tools: dict[str, list[tuple[str, Any]]] = {}
        self.footers: list[tuple[str, Any]] = []
        for plugin, item in host.collect_named("register_renderers"):
            if isinstance(item, MessageRenderer):
                self.messages.setdefault((item.role, item.custom_type), []).append((plugin, item.render))
            elif isinstance(item, ToolRenderer):
                self.tools.setdefault(item.tool, []).append((plugin, item))
            elif isinstance(item, FooterRenderer):
                self.footers.append((plugin, item.render))

    def _first_working(self, chain: list[tuple[str, Callable[..., Any]]], default: Any, *args: Any) -> Any:
        for plugin, function in reversed(chain):
            if id(function) in self._failed:
                continue
            try:
                return function(*args)
            except Exception as exc:  # a broken renderer must not take the screen down
                self._failed.add(id(function))
                self._report(
                    f"renderer of plugin {plugin!r} failed ({type(exc).__name__}: {exc}); using the default"
                )
        return default(*args)

    def message(self, message: Any, rc: RenderContext) -> Any:
        role = getattr(message, "role", None)
        chain = self.messages.get((role, getattr(message, "custom_type", None))) or self.messages.get(
            (role, None)
        )
        return self._first_working(chain or [], default_message, message, rc)

    def tool_call(self, view: ToolCallView, rc: RenderContext) -> Any:
        chain = [(p, r.render_call) for p, r in self.tools.get(view.name, []) if r.render_call is not None]
        return self._first_working(chain, default_tool_call, view, rc)

    def tool_result(self, view: ToolCallView, result: ToolResultView, rc: RenderContext) -> Any:
        chain = [
            (p, r.render_result) for p, r in self.tools.get(view.name, []) if r.render_result is not None
        ]
        return self._first_working(chain, default_tool_result, view, result, rc)

    def footer(self, info: Any, rc: RenderContext) -> str:
        def plain(info: Any, rc: RenderContext) -> str:
            return f"{info.cwd}  {info.provider or ''}/{info.model or ''}"

        return text_of(self._first_working(self.footers, plain, info, rc))


def _safe(lines: list[str]) -> list[str]:
    """Drawn lines as they may reach the terminal: scrollback lines are written to it raw, so
    whatever a renderer let through (a plugin's, or text it did not clean) keeps only SGR styles
    and plain OSC 8 links; every other escape and control character goes."""
    return [safe_for_terminal(line) for line in lines]


def text_of(result: Any) -> str:
    return result.text if isinstance(result, Rendered) else str(result or "")


class Item:
    """One thing in the transcript: ``draw(rc)`` returns ``str`` or :class:`Rendered`."""

    def __init__(self, draw: Callable[[RenderContext], Any], done: bool = False) -> None:
        self.draw = draw
        self.done = done
        self.state: dict[str, Any] = {}
        self.committed = 0
        """Lines already printed to scrollback."""


class Transcript:
    def __init__(self) -> None:
        self.items: list[Item] = []
        self.expanded = False
        self.show_thinking = True

    def add(self, item: Item) -> Item:
        self.items.append(item)
        return item

    def take(self, rc_for: Callable[[dict[str, Any]], RenderContext]) -> tuple[list[str], list[str]]:
        """Render the live items: ``(lines for scrollback now, lines still live)``."""
        to_scrollback: list[str] = []
        live: list[str] = []
        head = True
        for item in list(self.items):
            try:
                result = item.draw(rc_for(item.state))
            except Exception as exc:  # never lose the screen over one item
                result, item.done = f"[this item could not be drawn: {type(exc).__name__}: {exc}]", True
            text = text_of(result)
            lines = text.split("\n") if text else []
            stable = len(lines) if item.done else min(getattr(result, "stable", 0) or 0, len(lines))
            if head:
                if stable > item.committed:
                    to_scrollback.extend(_safe(lines[item.committed : stable]))
                    item.committed = stable
                if item.done:
                    if lines:
                        to_scrollback.append("")  # a blank line between finished items
                    self.items.remove(item)
                    continue
                head = False
            live.extend(_safe(lines[item.committed :]))
        return to_scrollback, live

    def finish(self, rc_for: Callable[[dict[str, Any]], RenderContext]) -> list[str]:
        """Every item as it stands now, for scrollback (the run or the application ends)."""
        for item in self.items:
            item.done = True
        return self.take(rc_for)[0]
