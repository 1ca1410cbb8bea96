"""The built-in tools' calls and results. A call draws the header (and bash's live output);
its result draws the body under it once the tool finished."""

from __future__ import annotations

import re
from typing import Any

from pi_host.lib.render import (
    RenderContext,
    ToolCallView,
    ToolResultView,
    default_tool_result,
    fit,
    head_lines,
    indent_lines,
    render_diff,
    render_new_file,
    sanitize,
    short_path,
    tail_lines,
    tool_title,
)

BASH_LIVE_LINES = 5
BASH_RESULT_LINES = 10
WRITE_PREVIEW_LINES = 10
DIFF_PREVIEW_LINES = 40
EXPAND_HINT = "(ctrl+o to expand)"

_NOTICE_RE = re.compile(r"(?:^|\n\n)\[([^\n\[\]]*)\]\s*$")
_BASH_STATUS_RE = re.compile(
    r"\n*(Command exited with code (-?\d+)|Command aborted|Command timed out after [^\n]*)\s*$"
)


def _join(lines: list[str], rc: RenderContext) -> str:
    return "\n".join(fit(lines, rc.width))


def _split_notice(text: str) -> tuple[str, str | None]:
    """A tool's text without its closing ``[notice]`` (and the notice)."""
    match = _NOTICE_RE.search(text)
    if match is None:
        return text, None
    return text[: match.start()], match.group(1)


def _path(call: ToolCallView, rc: RenderContext, key: str = "path", default: str = "") -> str:
    value = call.args.get(key) if isinstance(call.args, dict) else None
    return short_path(sanitize(str(value)), rc.cwd) if value else default


def _error(result: ToolResultView, rc: RenderContext) -> str:
    theme = rc.theme
    shown, hidden = head_lines(result.text or "(error)", None if rc.expanded else BASH_RESULT_LINES)
    lines = [theme.fg("error", line) for line in shown]
    if hidden:
        lines.append(theme.fg("muted", f"… {hidden} more lines {EXPAND_HINT}"))
    return _join(indent_lines(lines, rc.width), rc)


def _summary(rc: RenderContext, text: str, notice: str | None = None) -> list[str]:
    theme = rc.theme
    lines = [theme.fg("muted", text)]
    if notice:
        lines.append(theme.fg("warning", f"[{notice}]"))
    return lines


# --- bash -----------------------------------------------------------------------------------


def bash_call(call: ToolCallView, rc: RenderContext) -> str:
    theme = rc.theme
    command = sanitize(str(call.args.get("command", "") or ""))
    command_lines = command.split("\n") if command else [""]
    first = theme.fg("tool_title", "$", bold=True) + " " + theme.style(command_lines[0], bold=True)
    timeout = call.args.get("timeout")
    if len(command_lines) > 1 and not rc.expanded:
        first += theme.fg("muted", f" (+{len(command_lines) - 1} lines)")
    if timeout:
        first += theme.fg("muted", f" (timeout {timeout}s)")
    if call.partial:
        first += theme.fg("muted", " …")
    lines = [first]
    if rc.expanded and len(command_lines) > 1:
        lines += indent_lines([theme.style(line, bold=True) for line in command_lines[1:]], rc.width)
    if call.running and call.output:
        output, _notice = _split_notice(call.output)
        shown, hidden = tail_lines(output, BASH_LIVE_LINES)
        if hidden:
            lines.append(theme.fg("muted", f"  … {hidden} earlier lines"))
        lines += indent_lines([theme.fg("muted", line) for line in shown], rc.width)
    return _join(lines, rc)


def bash_result(call: ToolCallView, result: Any, rc: RenderContext) -> str:
    """The output's last lines (all when expanded), the exit status and the truncation note."""
    theme = rc.theme
    result = ToolResultView.of(result)
    text = result.text
    status = None
    match = _BASH_STATUS_RE.search(text)
    if match:
        text, status = text[: match.start()], match.group(1)
    text, notice = _split_notice(text)
    if text.strip() == "(no output)":
        text = ""
    shown, hidden = tail_lines(text, None if rc.expanded else BASH_RESULT_LINES)
    lines = []
    if hidden:
        lines.append(theme.fg("muted", f"… {hidden} earlier lines {EXPAND_HINT}"))
    lines += shown
    if status:
        lines.append(theme.fg("error", status))
    elif result.is_error and not shown:
        lines.append(theme.fg("error", "(failed)"))
    details = result.details if isinstance(result.details, dict) else {}
    full = details.get("fullOutputPath")
    if notice or full:
        note = notice or "Output truncated"
        if full and str(full) not in note:
            note += f". Full output: {full}"
        lines.append(theme.fg("warning", f"[{note}]"))
    if not lines:
        lines.append(theme.fg("muted", "(no output)"))
    return _join(indent_lines(lines, rc.width), rc)


# --- edit / write ---------------------------------------------------------------------------


def edit_call(call: ToolCallView, rc: RenderContext) -> str:
    theme = rc.theme
    edits = call.args.get("edits")
    detail = theme.fg("accent", _path(call, rc, default="…"))
    if isinstance(edits, list) and len(edits) > 1:
        detail += theme.fg("muted", f" ({len(edits)} edits)")
    return tool_title(rc, "edit", detail, partial=call.partial)


def edit_result(call: ToolCallView, result: Any, rc: RenderContext) -> str:
    result = ToolResultView.of(result)
    if result.is_error:
        return _error(result, rc)
    details = result.details if isinstance(result.details, dict) else {}
    diff = details.get("diff") or details.get("patch")
    if not diff:
        return default_tool_result(call, result, rc)
    room = max(1, rc.width - 2)
    body = render_diff(str(diff), rc.theme, room, None if rc.expanded else DIFF_PREVIEW_LINES)
    return _join(["  " + line if line else "" for line in body.split("\n")], rc)


def write_call(call: ToolCallView, rc: RenderContext) -> str:
    theme = rc.theme
    content = call.args.get("content")
    detail = theme.fg("accent", _path(call, rc, default="…"))
    if isinstance(content, str):
        count = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
        detail += theme.fg("muted", f" ({count} {'line' if count == 1 else 'lines'})")
    lines = [tool_title(rc, "write", detail, partial=call.partial)]
    if isinstance(content, str) and content:
        room = max(1, rc.width - 2)
        limit = None if rc.expanded else WRITE_PREVIEW_LINES
        preview = render_new_file(_path(call, rc), content, theme, room, limit)
        lines += ["  " + line for line in preview.split("\n")]
    return _join(lines, rc)


def write_result(call: ToolCallView, result: Any, rc: RenderContext) -> str:
    """Nothing more than the call shows, unless the write failed."""
    result = ToolResultView.of(result)
    return _error(result, rc) if result.is_error else ""


# --- read -----------------------------------------------------------------------------------


def read_call(call: ToolCallView, rc: RenderContext) -> str:
    theme = rc.theme
    detail = theme.fg("accent", _path(call, rc, default="…"))
    offset, limit = call.args.get("offset"), call.args.get("limit")
    if offset is not None or limit is not None:
        try:
            start = int(offset) if offset is not None else 1
            end = f"{start + int(limit) - 1}" if limit is not None else ""
            detail += theme.fg("warning", f":{start}-{end}" if end or offset is not None else "")
        except (TypeError, ValueError):
            pass
    return tool_title(rc, "read", detail, partial=call.partial)


def read_result(call: ToolCallView, result: Any, rc: RenderContext) -> str:
    """``N lines`` (the content itself only when expanded); images as ``[image]``."""
    theme = rc.theme
    result = ToolResultView.of(result)
    if result.is_error:
        return _error(result, rc)
    if result.has_images and not result.text.strip():
        return _join(indent_lines([theme.fg("muted", "[image]")], rc.width), rc)
    text, notice = _split_notice(result.text)
    text = text.rstrip("\n")
    count = text.count("\n") + 1 if text else 0
    lines = _summary(rc, f"{count} {'line' if count == 1 else 'lines'}", notice)
    if result.has_images:
        lines.append(theme.fg("muted", "[image]"))
    if rc.expanded and text:
        lines += sanitize(text).split("\n")
    elif text:
        lines[0] += theme.fg("muted", f" {EXPAND_HINT}", dim=True)
    return _join(indent_lines(lines, rc.width), rc)


# --- grep / find / ls -----------------------------------------------------------------------

_EMPTY = ("No matches found", "No files found matching the pattern", "(empty directory)")
_MATCH_RE = re.compile(r"^.+?:\d+: ")


def _listing(result: Any, rc: RenderContext, noun: tuple[str, str], count_lines: Any) -> str:
    theme = rc.theme
    result = ToolResultView.of(result)
    if result.is_error:
        return _error(result, rc)
    text, notice = _split_notice(result.text)
    text = text.rstrip("\n")
    if text.strip() in _EMPTY:
        return _join(indent_lines([theme.fg("muted", text.strip())], rc.width), rc)
    lines_in = text.split("\n") if text else []
    count = count_lines(lines_in)
    lines = _summary(rc, f"{count} {noun[0] if count == 1 else noun[1]}", notice)
    if rc.expanded:
        lines += sanitize(text).split("\n") if text else []
    elif lines_in:
        lines[0] += theme.fg("muted", f" {EXPAND_HINT}", dim=True)
    return _join(indent_lines(lines, rc.width), rc)


def grep_call(call: ToolCallView, rc: RenderContext) -> str:
    theme = rc.theme
    pattern = sanitize(str(call.args.get("pattern", "") or "")).replace("\n", "\\n")
    detail = theme.fg("accent", f"/{pattern}/")
    detail += theme.fg("muted", f" in {_path(call, rc, default='.')}")
    if call.args.get("glob"):
        detail += theme.fg("muted", f" ({sanitize(str(call.args['glob']))})")
    return tool_title(rc, "grep", detail, partial=call.partial)


def grep_result(call: ToolCallView, result: Any, rc: RenderContext) -> str:
    def matches(lines: list[str]) -> int:
        if call.args.get("context"):
            return sum(1 for line in lines if _MATCH_RE.match(line))
        return sum(1 for line in lines if line)

    return _listing(result, rc, ("match", "matches"), matches)


def find_call(call: ToolCallView, rc: RenderContext) -> str:
    theme = rc.theme
    pattern = sanitize(str(call.args.get("pattern", "") or ""))
    detail = theme.fg("accent", pattern) + theme.fg("muted", f" in {_path(call, rc, default='.')}")
    return tool_title(rc, "find", detail, partial=call.partial)


def find_result(call: ToolCallView, result: Any, rc: RenderContext) -> str:
    return _listing(result, rc, ("file", "files"), lambda lines: sum(1 for line in lines if line))


def ls_call(call: ToolCallView, rc: RenderContext) -> str:
    detail = rc.theme.fg("accent", _path(call, rc, default="."))
    return tool_title(rc, "ls", detail, partial=call.partial)


def ls_result(call: ToolCallView, result: Any, rc: RenderContext) -> str:
    return _listing(result, rc, ("entry", "entries"), lambda lines: sum(1 for line in lines if line))
