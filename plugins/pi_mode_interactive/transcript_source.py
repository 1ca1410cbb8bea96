"""The session's branch as blocks for the transcript view and for Ctrl+O: one block per shown
message, one per tool call (with its result), one per compaction or branch summary.

Indexing the branch touches each entry once and renders nothing; a block is decoded and drawn
the first time it is looked at, and its lines are kept per width (and expansion and theme), so
what a screen costs depends on the rows shown, not on the length of the session.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

from pi_host.lib.render import RenderContext, ToolCallView, ToolResultView, safe_for_terminal, strip_ansi
from pi_mode_interactive.transcript import text_of

SHOWN_ROLES = ("user", "assistant", "custom", "bashExecution")
EXPANDABLE = ("tool", "compaction", "branch", "bash")
"""Blocks whose renderers draw a short preview unless expanded."""
WIDTHS_KEPT = 2
"""Widths whose lines stay cached per block (the current one and the one before a resize)."""


@dataclasses.dataclass
class Block:
    kind: str
    """``user``, ``assistant``, ``custom``, ``bash``, ``tool``, ``compaction`` or ``branch``."""
    entry: dict[str, Any]
    call: dict[str, Any] | None = None
    """The tool call (as stored) of a ``tool`` block."""
    cache: dict[Any, list[str]] = dataclasses.field(default_factory=dict)
    plain: str | None = None


class SessionBlocks:
    """Blocks of a store's active branch, drawn with the given renderers."""

    def __init__(
        self,
        store: Any,
        renderers: Any,
        rc_for: Callable[[int, bool], RenderContext],
        theme_key: Callable[[], Any] = lambda: None,
        expanded: bool = False,
    ) -> None:
        self.store = store
        self.renderers = renderers
        self.rc_for = rc_for
        self.theme_key = theme_key
        self.expanded_default = expanded
        self.toggled: set[int] = set()
        self.blocks: list[Block] = []
        self.results: dict[str, dict[str, Any]] = {}
        self.leaf: str | None = None
        self._live: Callable[[int], list[str]] = lambda width: []
        self._live_lines: dict[int, list[str]] = {}
        """What streams, drawn once per width and frame (``sync`` starts a frame)."""
        self._live_width = 80
        self.sync()

    @property
    def live(self) -> Callable[[int], list[str]]:
        """Lines of what streams now (not in the store yet), drawn after the last block."""
        return self._live

    @live.setter
    def live(self, draw: Callable[[int], list[str]]) -> None:
        self._live, self._live_lines = draw, {}

    def live_lines(self, width: int) -> list[str]:
        """``live(width)`` as of this frame: a key and the drawing after it ask for these lines
        a dozen times (count, the bottom, clamping, the rows), and what streams is drawn once."""
        lines = self._live_lines.get(width)
        if lines is None:
            lines = self._live_lines[width] = self._live(width)
        return lines

    # --- indexing ---------------------------------------------------------------------------

    def sync(self) -> bool:
        """Take in what the store gained since the last look (True when anything changed): the
        entries after the known leaf when the branch grew, else the whole branch again. Called
        before each frame is drawn, it also lets what streams be drawn again."""
        self._live_lines = {}
        leaf = self.store.leaf_id()
        if leaf == self.leaf and self.blocks:
            return False
        added = self._since(self.leaf, leaf) if self.leaf is not None else None
        if added is None:
            self.blocks, self.results, self.toggled = [], {}, set()
            added = self.store.path()
        for entry in added:
            self._add(entry)
        self.leaf = leaf
        return True

    def _since(self, old: str | None, new: str | None) -> list[dict[str, Any]] | None:
        found: list[dict[str, Any]] = []
        at = new
        while at is not None and at != old:
            entry = self.store.get(at)
            if entry is None or len(found) > 10_000:  # another branch: index it again
                return None
            found.append(entry)
            at = entry.get("parentId")
        if at != old:
            return None
        found.reverse()
        return found

    def _add(self, entry: dict[str, Any]) -> None:
        kind = entry.get("type")
        if kind == "compaction":
            self.blocks.append(Block("compaction", entry))
        elif kind == "branch_summary":
            self.blocks.append(Block("branch", entry))
        elif kind == "custom_message" and entry.get("display", True):
            self.blocks.append(Block("custom", entry))
        elif kind == "message":
            message = entry.get("message") or {}
            role = message.get("role")
            if role == "toolResult":
                self.results[str(message.get("toolCallId"))] = message
            elif role in SHOWN_ROLES:
                self.blocks.append(Block("bash" if role == "bashExecution" else role, entry))
                content = message.get("content")
                for part in content if role == "assistant" and isinstance(content, list) else ():
                    if isinstance(part, dict) and part.get("type") == "toolCall":
                        self.blocks.append(Block("tool", entry, call=part))

    # --- what the view asks -----------------------------------------------------------------

    def count(self) -> int:
        return len(self.blocks) + (1 if self._live_now() else 0)

    def _live_now(self) -> bool:
        return bool(self.live_lines(self._live_width))

    def is_prompt(self, index: int) -> bool:
        return index < len(self.blocks) and self.blocks[index].kind == "user"

    def is_answer(self, index: int) -> bool:
        return index < len(self.blocks) and self.blocks[index].kind == "assistant"

    def key(self, index: int) -> tuple[str, str] | None:
        """What names the block across indexings of the same branch: its entry's id (and the
        tool call's)."""
        if index >= len(self.blocks):
            return None
        block = self.blocks[index]
        return str(block.entry.get("id")), str((block.call or {}).get("id", ""))

    def find(self, key: tuple[str, str] | None) -> int | None:
        """The index of the block ``key`` names, if the branch still has it."""
        return next((i for i in range(len(self.blocks) - 1, -1, -1) if self.key(i) == key), None)

    def expandable(self, index: int) -> bool:
        return index < len(self.blocks) and self.blocks[index].kind in EXPANDABLE

    def is_expanded(self, index: int) -> bool:
        return self.expanded_default != (index in self.toggled)

    def toggle(self, index: int) -> None:
        self.toggled ^= {index}

    def lines(self, index: int, width: int, expanded: bool | None = None) -> list[str]:
        if index >= len(self.blocks):
            self._live_width = width  # the width count() asks at: the one drawn anyway
            return self.live_lines(width)
        block = self.blocks[index]
        wide = self.is_expanded(index) if expanded is None else expanded
        key = (width, wide, self.theme_key())
        cached = block.cache.get(key)
        if cached is None:
            try:
                text = self._draw(block, self.rc_for(width, wide))
            except Exception as exc:  # one broken block must not take the view down
                text = f"[this block could not be drawn: {type(exc).__name__}: {exc}]"
            cached = [safe_for_terminal(line) for line in text.split("\n")] if text else []
            if len(block.cache) >= WIDTHS_KEPT * 2:
                block.cache.pop(next(iter(block.cache)))
            block.cache[key] = cached
        return cached

    def text(self, index: int) -> str:
        """The block's words for search (what it says, not how it is drawn)."""
        if index >= len(self.blocks):
            return strip_ansi("\n".join(self.live_lines(200)))
        block = self.blocks[index]
        if block.plain is None:
            block.plain = _plain(block, self.results)
        return block.plain

    # --- drawing one block ------------------------------------------------------------------

    def _draw(self, block: Block, rc: RenderContext) -> str:
        if block.kind == "tool":
            view, result = self._tool(block)
            call = text_of(self.renderers.tool_call(view, rc))
            shown = text_of(self.renderers.tool_result(view, result, rc)) if result is not None else ""
            return "\n".join(part for part in (call, shown) if part)
        return text_of(self.renderers.message(_message(block), rc))

    def _tool(self, block: Block) -> tuple[ToolCallView, ToolResultView | None]:
        from pi_host.protocol.messages import parse_message

        call = block.call or {}
        view = ToolCallView(
            id=str(call.get("id")), name=str(call.get("name")), args=dict(call.get("arguments") or {})
        )
        stored = self.results.get(view.id)
        if stored is None:
            return view, None
        message = parse_message(stored)
        return view, dataclasses.replace(ToolResultView.of(message), is_error=bool(message.is_error))


def _message(block: Block) -> Any:
    from pi_host.protocol.messages import (
        BranchSummaryMessage,
        CompactionSummaryMessage,
        CustomMessage,
        parse_message,
    )

    entry = block.entry
    if block.kind == "compaction":
        return CompactionSummaryMessage(
            summary=entry.get("summary") or "", tokens_before=entry.get("tokensBefore") or 0
        )
    if block.kind == "branch":
        return BranchSummaryMessage(summary=entry.get("summary") or "", from_id=entry.get("fromId") or "")
    if block.kind == "custom":
        return CustomMessage(
            custom_type=entry.get("customType", "custom"),
            content=entry.get("content", ""),
            display=True,
            details=entry.get("details"),
        )
    return parse_message(entry["message"])


def _plain(block: Block, results: dict[str, dict[str, Any]]) -> str:
    entry = block.entry
    if block.kind in ("compaction", "branch"):
        return str(entry.get("summary") or "")
    if block.kind == "tool":
        call = block.call or {}
        result = results.get(str(call.get("id"))) or {}
        return (
            f"{call.get('name')} {json.dumps(call.get('arguments'))}\n{_content_text(result.get('content'))}"
        )
    if block.kind == "custom":
        return _content_text(entry.get("content"))
    message = entry.get("message") or {}
    if block.kind == "bash":
        return f"{message.get('command', '')}\n{message.get('output', '')}"
    return _content_text(message.get("content"))


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for part in content if isinstance(content, list) else ():
        if isinstance(part, dict):
            parts.append(str(part.get("text") or part.get("thinking") or ""))
    return "\n".join(parts)
