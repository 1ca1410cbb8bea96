"""The drawing: the one-line footer and the ``bash`` tool's call and result.

Only :mod:`pi_host.lib.render` is used: ``RenderContext`` (width, theme, expanded, state),
``FooterInfo``, the ``ToolCallView`` / ``ToolResultView`` views and the text helpers.
"""

from __future__ import annotations

import re
from typing import Any

from pi_host.lib.render import (
    FooterInfo,
    RenderContext,
    ToolCallView,
    ToolResultView,
    fit,
    format_cost,
    format_tokens,
    sanitize,
    tail_lines,
    truncate,
    visible_width,
)

SEPARATOR = " · "
TAIL_LINES = 6
"""Output lines a finished command shows (all of them with Ctrl+O)."""
LIVE_LINES = 3
"""Output lines a running command shows."""

_STATUS_LINE = re.compile(
    r"\n*(?:Command exited with code (-?\d+)|(Command aborted)|(Command timed out after [^\n]*))\s*$"
)
_NOTICE = re.compile(r"(?:^|\n\n)\[([^\n\[\]]*)\]\s*$")


# --- footer ---------------------------------------------------------------------------------


def _one_line(text: Any) -> str:
    return sanitize(str(text)).replace("\n", " ")


def footer_parts(info: FooterInfo, rc: RenderContext, timings: Any = None) -> list[tuple[int, str]]:
    """``(priority, styled text)`` in display order; the lowest priority goes first when the line
    is too long."""
    from . import STATUS_KEY

    theme = rc.theme
    parts: list[tuple[int, str]] = []
    if info.model:
        name = f"{info.provider}/{info.model}" if info.provider else info.model
        if info.reasoning:
            name += f" ({info.thinking_level or 'off'})"
        parts.append((100, theme.fg("accent", _one_line(name), bold=True)))
    tokens = f"↑{format_tokens(info.input_tokens)} ↓{format_tokens(info.output_tokens)}"
    if info.cache_read or info.cache_write:
        tokens += f" R{format_tokens(info.cache_read)}"
    parts.append((90, theme.fg("text", tokens)))
    parts.append((80, theme.fg("warning" if info.cost >= 1 else "muted", format_cost(info.cost))))
    if info.context_window and info.context_tokens is not None:
        share = info.context_tokens / info.context_window
        colour = "error" if share > 0.9 else "warning" if share > 0.7 else "muted"
        parts.append((50, theme.fg(colour, f"ctx {share * 100:.0f}%")))
    statuses = dict(info.statuses or {})
    timer = statuses.pop(STATUS_KEY, None)
    if timer is None and timings is not None:
        timer = timings.turn_text()
    if timer:
        parts.append((70, theme.fg("muted", _one_line(timer))))
    if info.git_branch:
        parts.append((60, theme.fg("success", f"⎇ {_one_line(info.git_branch)}")))
    if info.session_name:
        parts.append((30, theme.fg("muted", f"“{_one_line(info.session_name)}”")))
    others = [_one_line(text) for _key, text in sorted(statuses.items()) if text]
    if others:
        parts.append((20, theme.fg("muted", " ".join(others))))
    return parts


def footer(info: FooterInfo, rc: RenderContext, timings: Any = None) -> str:
    """One line: ``model · ↑in ↓out · $cost · ctx% · turn 1.2s · ⎇ branch · name · statuses``."""
    width = max(1, rc.width)
    parts = footer_parts(info, rc, timings)
    separator = rc.theme.fg("dim", SEPARATOR)

    def length(items: list[tuple[int, str]]) -> int:
        return sum(visible_width(text) for _, text in items) + len(SEPARATOR) * max(0, len(items) - 1)

    while len(parts) > 1 and length(parts) > width:
        parts.remove(min(parts, key=lambda part: part[0]))
    return truncate(separator.join(text for _, text in parts), width)


# --- bash -----------------------------------------------------------------------------------


def exit_status(call: ToolCallView, result: ToolResultView, timings: Any = None) -> tuple[bool, str, str]:
    """``(ok, label, output)``: whether the command succeeded, ``exit 3`` / ``aborted`` /
    ``timed out`` / ``failed``, and the output without the status line pi's bash tool adds."""
    text = result.text or ""
    label = None
    match = _STATUS_LINE.search(text)
    if match:
        text = text[: match.start()]
        if match.group(1) is not None:
            label = f"exit {match.group(1)}"
        else:
            label = "aborted" if match.group(2) else "timed out"
    code = (timings.exit_codes.get(call.id) if timings is not None else None) if call.id else None
    if code is not None:
        label = f"exit {code}"
    if label is None:
        label = "failed" if result.is_error else "exit 0"
    ok = label == "exit 0" and not result.is_error
    return ok, label, text


def _command_lines(call: ToolCallView) -> list[str]:
    command = sanitize(str((call.args or {}).get("command", "") or ""))
    return command.split("\n") if command else [""]


def bash_call(call: ToolCallView, rc: RenderContext, timings: Any = None) -> str:
    """``$ command`` (``+N lines`` for a script), and while it runs the last output lines."""
    import time

    theme = rc.theme
    lines = _command_lines(call)
    head = theme.fg("tool_title", "$", bold=True) + " " + theme.style(lines[0], bold=True)
    if len(lines) > 1:
        head += theme.fg("muted", f" (+{len(lines) - 1} lines)")
    if call.partial:
        head += theme.fg("muted", " …")
    out = [head]
    if rc.expanded:
        out += ["  " + theme.style(line, bold=True) for line in lines[1:]]
    if call.running:
        started = timings.tool_started.get(call.id) if timings is not None else None
        if started is not None:
            out[0] += theme.fg("muted", f"  running {time.monotonic() - started:.1f}s")
        shown, _hidden = tail_lines(call.output or "", LIVE_LINES)
        out += [theme.fg("dim", "┆ ") + theme.fg("muted", line) for line in shown]
    return "\n".join(fit(out, rc.width))


def bash_result(call: ToolCallView, result: Any, rc: RenderContext, timings: Any = None) -> str:
    """The last output lines behind a gutter in the exit status's colour, then the status."""
    theme = rc.theme
    result = ToolResultView.of(result)
    ok, label, text = exit_status(call, result, timings)
    notice = None
    found = _NOTICE.search(text)
    if found:
        text, notice = text[: found.start()], found.group(1)
    if text.strip() == "(no output)":
        text = ""
    colour = "success" if ok else "error"
    gutter = theme.fg(colour, "│ ")
    shown, hidden = tail_lines(text, None if rc.expanded else TAIL_LINES)
    out = []
    if hidden:
        out.append(gutter + theme.fg("muted", f"… {hidden} earlier lines (ctrl+o to expand)"))
    out += [gutter + line for line in shown]
    if notice:
        out.append(gutter + theme.fg("warning", f"[{notice}]"))
    status = ("✓ " if ok else "✗ ") + label
    seconds = timings.tool_seconds.get(call.id) if timings is not None and call.id else None
    if seconds is not None:
        status += f" · {seconds:.1f}s"
    out.append(theme.fg(colour, "└ " + status, bold=not ok))
    return "\n".join(fit(out, rc.width))
