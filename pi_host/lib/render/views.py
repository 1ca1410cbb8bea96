"""What tool renderers receive (:class:`ToolCallView`, :class:`ToolResultView`), helpers the
renderers share, and the fallbacks the app uses for tools and messages nobody registered."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from pi_host.lib.render.ansi import sanitize, truncate, visible_width, wrap
from pi_host.lib.render.context import RenderContext

__all__ = [
    "ToolCallView",
    "ToolResultView",
    "block_text",
    "compact_json",
    "content_text",
    "default_message",
    "default_tool_call",
    "default_tool_result",
    "fit",
    "get",
    "head_lines",
    "indent_lines",
    "short_path",
    "tail_lines",
    "tool_title",
]


def get(obj: Any, name: str, default: Any = None) -> Any:
    """Field ``name`` (snake_case) of a protocol model or of its JSON dict (camelCase)."""
    if isinstance(obj, dict):
        if name in obj:
            return obj[name]
        head, *rest = name.split("_")
        camel = head + "".join(part.title() for part in rest)
        return obj.get(camel, default)
    return getattr(obj, name, default)


def block_text(block: Any) -> str:
    """The readable text of a content block: text, thinking, ``[image]`` for images."""
    if isinstance(block, str):
        return block
    kind = get(block, "type")
    if kind == "text":
        return str(get(block, "text", "") or "")
    if kind == "thinking":
        return str(get(block, "thinking", "") or "")
    if kind == "image":
        return "[image]"
    return ""


def content_text(content: Any, *, images: bool = True) -> str:
    """A message's ``content`` (a string or blocks) as text; tool calls are left out."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if get(block, "type") == "image" and not images:
            continue
        text = block_text(block)
        if text:
            parts.append(text)
    return "\n".join(parts)


@dataclass
class ToolCallView:
    id: str
    name: str
    args: dict[str, Any] = field(default_factory=dict)
    partial: bool = False
    """The arguments are still streaming (they may be incomplete)."""
    running: bool = False
    """The tool is executing."""
    output: str = ""
    """The live output so far (e.g. bash's partial output from ``tool_execution_update``)."""


@dataclass
class ToolResultView:
    content: list[Any] = field(default_factory=list)
    details: Any = None
    is_error: bool = False
    text: str = ""
    """The text blocks joined (filled from ``content`` when left empty)."""

    def __post_init__(self) -> None:
        if not self.text and self.content:
            self.text = "\n".join(str(get(b, "text", "")) for b in self.content if get(b, "type") == "text")

    @classmethod
    def of(cls, result: Any) -> ToolResultView:
        """A view of a ``ToolResultMessage``, a ``ToolResult`` or their JSON dicts."""
        if isinstance(result, cls):
            return result
        return cls(
            content=list(get(result, "content") or []),
            details=get(result, "details"),
            is_error=bool(get(result, "is_error", False)),
        )

    @property
    def has_images(self) -> bool:
        return any(get(b, "type") == "image" for b in self.content)


# --- helpers ------------------------------------------------------------------------------------


def short_path(path: str, cwd: str = "") -> str:
    """``path`` relative to ``cwd`` when inside it, with the home directory as ``~``."""
    if not path:
        return ""
    expanded = os.path.expanduser(path)
    if cwd and os.path.isabs(expanded):
        try:
            rel = os.path.relpath(expanded, cwd)
        except ValueError:
            rel = ""
        if rel and not rel.startswith(".."):
            return rel if rel != "." else "."
    home = os.path.expanduser("~")
    if home and home != "/" and (expanded == home or expanded.startswith(home + os.sep)):
        return "~" + expanded[len(home) :]
    return path


def fit(lines: list[str], width: int) -> list[str]:
    """Each line cut to ``width`` columns."""
    width = max(1, width)
    return [line if visible_width(line) <= width else truncate(line, width) for line in lines]


def indent_lines(lines: list[str], width: int, prefix: str = "  ") -> list[str]:
    """``lines`` wrapped to fit after ``prefix`` and prefixed."""
    room = max(1, width - visible_width(prefix))
    out = []
    for line in lines:
        for part in wrap(line, room) if line else [""]:
            out.append(prefix + part if part else "")
    return fit(out, width)


def _clean_lines(text: str) -> list[str]:
    text = sanitize(text).rstrip("\n")
    return text.split("\n") if text else []


def tail_lines(text: str, count: int | None) -> tuple[list[str], int]:
    """The last ``count`` lines of ``text`` (all with None) and how many came before them."""
    lines = _clean_lines(text)
    if count is None or len(lines) <= count:
        return lines, 0
    return lines[-count:], len(lines) - count


def head_lines(text: str, count: int | None) -> tuple[list[str], int]:
    """The first ``count`` lines of ``text`` (all with None) and how many follow them."""
    lines = _clean_lines(text)
    if count is None or len(lines) <= count:
        return lines, 0
    return lines[:count], len(lines) - count


def tool_title(rc: RenderContext, name: str, detail: str = "", *, partial: bool = False) -> str:
    """``name detail`` on one line: the name bold in the tool colour, cut to the width."""
    theme = rc.theme
    line = theme.fg("tool_title", name, bold=True)
    if detail:
        line += " " + detail
    if partial:
        line += theme.fg("muted", " …")
    return truncate(line, max(1, rc.width))


def compact_json(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return sanitize(text).replace("\n", " ")


# --- fallbacks ----------------------------------------------------------------------------------

PREVIEW_LINES = 10


def default_tool_call(call: ToolCallView, rc: RenderContext) -> str:
    """Any tool's call: its name and compact JSON arguments on one line, plus the live output's
    last lines while it runs."""
    theme = rc.theme
    args = compact_json(call.args) if call.args else ""
    lines = [tool_title(rc, call.name, theme.fg("muted", args) if args else "", partial=call.partial)]
    if call.running and call.output:
        shown, _hidden = tail_lines(call.output, 5)
        lines += indent_lines([theme.fg("muted", line) for line in shown], rc.width)
    return "\n".join(fit(lines, rc.width))


def default_tool_result(call: ToolCallView, result: ToolResultView, rc: RenderContext) -> str:
    """Any tool's result: the text's first lines (all when expanded), red for an error."""
    theme = rc.theme
    result = ToolResultView.of(result)
    text = result.text
    shown, hidden = head_lines(text, None if rc.expanded else PREVIEW_LINES)
    colour = "error" if result.is_error else "muted"
    lines = [theme.fg(colour, line) for line in shown]
    if result.has_images:
        lines.append(theme.fg("muted", "[image]"))
    if hidden:
        lines.append(theme.fg("muted", f"… {hidden} more lines (ctrl+o to expand)"))
    if not lines:
        lines = [theme.fg(colour, "(error)" if result.is_error else "(no output)")]
    return "\n".join(indent_lines(lines, rc.width))


def default_message(message: Any, rc: RenderContext) -> str:
    """A message no renderer handles: its role (and custom type) as a dim title, then its text."""
    theme = rc.theme
    role = str(get(message, "role", "message") or "message")
    kind = get(message, "custom_type")
    title = f"[{role}{': ' + str(kind) if kind else ''}]"
    content = get(message, "content")
    if content is None:
        content = get(message, "summary") or get(message, "output") or ""
    text = sanitize(content_text(content))
    lines = [theme.fg("muted", title, bold=True)]
    lines += indent_lines(text.split("\n") if text else [], rc.width)
    return "\n".join(fit(lines, rc.width))
