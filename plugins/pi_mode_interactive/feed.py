"""Session events → transcript items: a message is one item, each tool call another (its call while
it streams and runs, then call and result). The application owns everything else on the screen."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from pi_host.lib.render import RenderContext, ToolCallView, ToolResultView
from pi_mode_interactive.transcript import Item, Renderers, Transcript, text_of

HIDDEN_ROLES = ("toolResult", "system")
"""Roles drawn elsewhere (a tool result with its call) or not at all."""


class SessionFeed:
    def __init__(self, transcript: Transcript, renderers: Renderers) -> None:
        self.transcript = transcript
        self.renderers = renderers
        self.tools: dict[str, ToolCallView] = {}
        self.results: dict[str, ToolResultView] = {}
        self.tool_items: dict[str, Item] = {}
        self.assistant: Item | None = None
        """The assistant message that streams now."""
        self.started: dict[str, float] = {}
        """Calls executing now: when they started (their item shows the time so far)."""
        self.took: dict[str, float] = {}
        """Calls that ran while this session was shown: how long (drawn as ``Took N s``)."""

    def reset(self, renderers: Renderers) -> None:
        """A new session: nothing of the old one is live any more."""
        self.renderers = renderers
        self.tools.clear()
        self.results.clear()
        self.tool_items.clear()
        self.started.clear()
        self.took.clear()
        self.assistant = None

    def history(self, messages: list[Any]) -> None:
        """Draw a conversation as finished items (resume, tree navigation, fork): every tool call
        gets a new item with the result stored after it, even when the same call was drawn live
        before (its old item stays in the scrollback)."""
        for message in messages:
            if getattr(message, "role", None) == "toolResult":
                call_id = getattr(message, "tool_call_id", None)
                if call_id:
                    result = ToolResultView.of(message)
                    self.results[call_id] = dataclasses.replace(result, is_error=bool(message.is_error))
        for message in messages:
            if getattr(message, "role", None) == "assistant":
                for block in message.content:
                    if getattr(block, "type", None) == "toolCall":
                        self.tool_items.pop(block.id, None)
                        self.tools.pop(block.id, None)
            self.message_item(message, done=True)

    # --- items ----------------------------------------------------------------------------------

    def message_item(self, message: Any, done: bool) -> Item | None:
        role = getattr(message, "role", None)
        if role in HIDDEN_ROLES or (role == "custom" and not getattr(message, "display", True)):
            return None
        holder = {"message": message}  # a streaming message is replaced by each update
        item = self.transcript.add(Item(lambda rc: self.renderers.message(holder["message"], rc), done=done))
        item.state["_holder"] = holder
        for block in message.content if role == "assistant" else ():
            if getattr(block, "type", None) == "toolCall":
                self.tools.setdefault(
                    block.id, ToolCallView(id=block.id, name=block.name, args=dict(block.arguments or {}))
                )
                if done:
                    self.tool_item(block.id, done=True)
        return item

    def draw_tool(self, view: ToolCallView, result: ToolResultView | None, rc: RenderContext) -> str:
        """A call, and under it its result once there is one."""
        call = text_of(self.renderers.tool_call(view, rc))
        timing = self._timing(view.id, rc)
        if result is None:
            return "\n".join(part for part in (call, timing) if part)
        return "\n".join(
            part for part in (call, text_of(self.renderers.tool_result(view, result, rc)), timing) if part
        )

    def _timing(self, call_id: str, rc: RenderContext) -> str:
        """``Running… 3s`` under a call that executes (whole seconds: the item is drawn again
        twice a second), ``Took 2.4s`` under one that ended."""
        if call_id in self.started:
            seconds = int(time.monotonic() - self.started[call_id])
            return rc.theme.fg("muted", f"Running… {seconds}s") if seconds else ""
        if call_id in self.took:
            return rc.theme.fg("muted", f"Took {self.took[call_id]:.1f}s")
        return ""

    def tool_item(self, call_id: str, done: bool = False) -> Item:
        item = self.tool_items.get(call_id)
        if item is None:

            def draw(rc: RenderContext) -> str:
                view = self.tools.get(call_id)
                return "" if view is None else self.draw_tool(view, self.results.get(call_id), rc)

            item = self.tool_items[call_id] = self.transcript.add(Item(draw, done=done))
        return item

    def live_tool(self, view: ToolCallView) -> Item:
        """Show a call that is not the model's (a ``!command``) like a tool call."""
        self.tools[view.id] = view
        self.started[view.id] = time.monotonic()
        return self.tool_item(view.id)

    def forget_tool(self, call_id: str) -> None:
        """Take a live call off the screen without printing it (its message is drawn instead)."""
        item = self.tool_items.pop(call_id, None)
        if item is not None and item in self.transcript.items:
            self.transcript.items.remove(item)
        self.tools.pop(call_id, None)
        self.started.pop(call_id, None)

    def show_last_result_again(self) -> bool:
        """Scrollback cannot change: Ctrl+O prints the last result again, drawn as it is now."""
        call_id = next(reversed(self.results), None)
        view = self.tools.get(call_id) if call_id is not None else None
        if view is None:
            return False
        result = self.results[call_id]
        self.transcript.add(Item(lambda rc: self.draw_tool(view, result, rc), done=True))
        return True

    def settle(self) -> None:
        """The run is over: whatever it left live is finished."""
        if self.assistant is not None:
            self.assistant.done = True
            self.assistant = None
        for item in self.tool_items.values():
            item.done = True

    # --- events ---------------------------------------------------------------------------------

    def handle(self, event: dict[str, Any]) -> bool:
        """Take a session event; True when it was one of the feed's."""
        handler = getattr(self, f"_on_{event.get('type')}", None)
        if handler is None:
            return False
        handler(event)
        return True

    def _on_message_start(self, event: dict[str, Any]) -> None:
        message = event["message"]
        if getattr(message, "role", None) == "assistant":
            self.assistant = self.message_item(message, done=False)
        else:
            self.message_item(message, done=True)

    def _on_message_update(self, event: dict[str, Any]) -> None:
        if self.assistant is None:
            return
        message = event["message"]
        self.assistant.state["_holder"]["message"] = message
        for block in getattr(message, "content", ()):
            if getattr(block, "type", None) == "toolCall":
                view = self.tools.get(block.id)
                if view is None:
                    view = self.tools[block.id] = ToolCallView(
                        id=block.id, name=block.name, args={}, partial=True
                    )
                    self.tool_item(block.id)
                view.args = dict(block.arguments or {})

    def _on_message_end(self, event: dict[str, Any]) -> None:
        message = event["message"]
        if getattr(message, "role", None) != "assistant" or self.assistant is None:
            return
        self.assistant.state["_holder"]["message"] = message
        self.assistant.done = True
        self.assistant = None
        stopped = getattr(message, "stop_reason", "") in ("error", "aborted")
        for block in message.content:
            if getattr(block, "type", None) == "toolCall":
                view = self.tools.setdefault(block.id, ToolCallView(id=block.id, name=block.name, args={}))
                view.args, view.partial = dict(block.arguments or {}), False
                item = self.tool_item(block.id)
                if stopped:  # no tool runs after an error or an abort
                    item.done = True

    def _on_tool_execution_start(self, event: dict[str, Any]) -> None:
        call_id = event["toolCallId"]
        view = self.tools.setdefault(call_id, ToolCallView(id=call_id, name=event["toolName"], args={}))
        view.args = dict(event.get("args") or view.args)
        view.partial, view.running = False, True
        self.started[call_id] = time.monotonic()
        self.tool_item(call_id)

    def _on_tool_execution_update(self, event: dict[str, Any]) -> None:
        view = self.tools.get(event["toolCallId"])
        if view is not None:
            view.output = ToolResultView.of(event.get("partialResult")).text

    def _on_tool_execution_end(self, event: dict[str, Any]) -> None:
        call_id = event["toolCallId"]
        view = self.tools.get(call_id)
        if view is not None:
            view.running = False
        if call_id in self.started:
            self.took[call_id] = time.monotonic() - self.started.pop(call_id)
        result = ToolResultView.of(event.get("result"))
        self.results[call_id] = dataclasses.replace(result, is_error=bool(event.get("isError")))
        self.tool_item(call_id).done = True
