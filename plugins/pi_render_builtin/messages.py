"""Messages of the transcript: user, assistant (streaming Markdown), ``!command`` runs,
compaction and branch summaries, custom messages."""

from __future__ import annotations

from typing import Any

from pi_host.lib.render import (
    MarkdownStream,
    RenderContext,
    Rendered,
    content_text,
    fit,
    get,
    indent_lines,
    pad,
    render_markdown,
    sanitize,
    tail_lines,
    truncate,
    visible_width,
    wrap,
)

BASH_TAIL_LINES = 20
SUMMARY_LINES = 3
CUSTOM_LINES = 20


# --- user -----------------------------------------------------------------------------------


def render_user(message: Any, rc: RenderContext) -> str:
    """The user's text on the user background (a ``>`` prefix without colour), wrapped."""
    theme = rc.theme
    width = max(1, rc.width)
    text = sanitize(content_text(get(message, "content")))
    if theme.no_color:
        lines = indent_lines(text.split("\n"), width, "  ")
        if lines:
            lines[0] = theme.style("> ", bold=True) + lines[0][2:]
        return "\n".join(fit(lines or [theme.style(">", bold=True)], width))
    room = max(1, width - 2)
    body = [part for line in text.split("\n") for part in (wrap(line, room) if line else [""])]
    lines = [theme.bg("user_bg", " " + pad(line, room) + " ") if width >= 3 else line for line in body]
    return "\n".join(fit(lines, width))


# --- assistant ------------------------------------------------------------------------------


def _thinking_lines(text: str, rc: RenderContext, complete: bool) -> tuple[list[str], int]:
    """Thinking text dim and italic; lines of complete source lines are stable."""
    theme = rc.theme
    if not rc.show_thinking:
        return [truncate(theme.fg("thinking", "Thinking…", italic=True, dim=True), rc.width)], int(complete)
    text = sanitize(text).strip("\n")
    if not text:
        return [], 0
    source = text.split("\n")
    lines: list[str] = []
    stable = 0
    for index, line in enumerate(source):
        lines += [theme.fg("thinking", part, italic=True) for part in wrap(line, rc.width)] if line else [""]
        if index < len(source) - 1:
            stable = len(lines)
    return fit(lines, rc.width), len(lines) if complete else stable


def render_assistant(message: Any, rc: RenderContext) -> Rendered:
    """Text as Markdown, thinking dim; tool calls are drawn by the tool renderers. While the
    message streams (``stop_reason == "pending"``) ``stable`` counts the lines that will not
    change; afterwards all lines are stable."""
    theme = rc.theme
    width = max(1, rc.width)
    stop_reason = get(message, "stop_reason", "stop")
    streaming = stop_reason == "pending"
    streams: dict[int, MarkdownStream] = rc.state.setdefault("markdown_streams", {})
    blocks = [b for b in (get(message, "content") or []) if get(b, "type") != "toolCall"]
    parts: list[tuple[list[str], int]] = []
    for index, block in enumerate(blocks):
        complete = not streaming or index < len(blocks) - 1
        kind = get(block, "type")
        if kind == "text":
            stream = streams.setdefault(index, MarkdownStream())
            rendered = stream.render(str(get(block, "text", "") or ""), width, theme, final=complete)
            parts.append((rendered.lines, rendered.stable))
        elif kind == "thinking":
            if get(block, "redacted"):
                line = theme.fg("thinking", "Thinking (redacted)", italic=True, dim=True)
                parts.append(([truncate(line, width)], 1))
            else:
                parts.append(_thinking_lines(str(get(block, "thinking", "") or ""), rc, complete))
        elif kind == "image":
            parts.append(([theme.fg("muted", "[image]")], 1))
    notes = _stop_notes(message, stop_reason, rc)
    if notes:
        parts.append((notes, len(notes)))
    out: list[str] = []
    stable = 0
    for index, (lines, part_stable) in enumerate(parts):
        if not lines:
            continue
        before = len(out)
        if out:
            out.append("")
        out.extend(lines)
        last = index == len(parts) - 1
        if not last or not streaming:
            stable = len(out)
        elif part_stable:
            stable = len(out) - len(lines) + part_stable
        else:
            stable = before
    return Rendered("\n".join(out), len(out) if not streaming else stable)


def _stop_notes(message: Any, stop_reason: str, rc: RenderContext) -> list[str]:
    theme = rc.theme
    error = sanitize(str(get(message, "error_message") or ""))
    if stop_reason == "error":
        text = f"Error: {error}" if error else "Error: the request failed"
        return [theme.fg("error", line) for line in wrap(text, rc.width)]
    if stop_reason == "aborted":
        text = "Aborted" + (f": {error}" if error and error.lower() != "aborted" else "")
        return [theme.fg("muted", line, dim=True) for line in wrap(text, rc.width)]
    if stop_reason == "length":
        return [truncate(theme.fg("warning", "(stopped: output token limit reached)"), rc.width)]
    return []


# --- user bash ------------------------------------------------------------------------------


def render_bash_execution(message: Any, rc: RenderContext) -> str:
    """``$ command``, the output's last lines (all when expanded), exit code, truncation and
    context notes."""
    theme = rc.theme
    width = max(1, rc.width)
    command = sanitize(str(get(message, "command", "") or ""))
    excluded = bool(get(message, "exclude_from_context"))
    prompt = "$$" if excluded else "$"
    lines = []
    for index, line in enumerate(command.split("\n")):
        head = theme.fg("accent", prompt, bold=True) + " " if index == 0 else "  "
        lines += indent_lines([theme.style(line, bold=True)], width, head) if line else [head.rstrip()]
    shown, hidden = tail_lines(
        str(get(message, "output", "") or ""), None if rc.expanded else BASH_TAIL_LINES
    )
    if hidden:
        lines.append(theme.fg("muted", f"… {hidden} earlier lines (ctrl+o to expand)"))
    lines += [part for line in shown for part in (wrap(line, width) if line else [""])]
    code = get(message, "exit_code")
    if get(message, "cancelled"):
        lines.append(theme.fg("warning", "(cancelled)"))
    elif code not in (None, 0):
        lines.append(theme.fg("error", f"exit code {code}"))
    if get(message, "truncated"):
        path = get(message, "full_output_path")
        note = "Output truncated" + (f"; full output: {path}" if path else "")
        lines += [theme.fg("warning", part) for part in wrap(note, width)]
    if excluded:
        lines.append(theme.fg("muted", "(not sent to the model)", dim=True))
    return "\n".join(fit(lines, width))


# --- summaries ------------------------------------------------------------------------------


def _boxed(title: str, body: str, rc: RenderContext, limit: int = SUMMARY_LINES) -> str:
    """A titled block with a left border; the body cut to a few lines unless expanded."""
    theme = rc.theme
    width = max(1, rc.width)
    bar = theme.fg("border", "│") + " "
    top_text = "┌─ " + title + " "
    top = theme.fg("border", "┌─ ") + theme.fg("accent", title, bold=True) + " "
    top += theme.fg("border", "─" * max(0, width - visible_width(top_text)))
    lines = [top]
    if width > 4 and body:  # a summary is Markdown (headings, lists): drawn as such, like pi
        wrapped = [bar + line for line in render_markdown(body, width - 2, theme).split("\n")]
    else:
        body_lines = (
            [theme.fg("muted", line) for line in sanitize(body).strip("\n").split("\n")] if body else []
        )
        wrapped = fit(body_lines, width)
    if not rc.expanded and len(wrapped) > limit:
        hidden = len(wrapped) - limit
        wrapped = wrapped[:limit] + [bar + theme.fg("muted", f"… {hidden} more lines (ctrl+o to expand)")]
    lines += [line or bar.rstrip() for line in wrapped]
    lines.append(theme.fg("border", "└" + "─" * max(0, width - 1)))
    return "\n".join(fit(lines, width))


def render_compaction_summary(message: Any, rc: RenderContext) -> str:
    tokens = int(get(message, "tokens_before", 0) or 0)
    return _boxed(f"Compacted {tokens:,} tokens", str(get(message, "summary", "") or ""), rc)


def render_branch_summary(message: Any, rc: RenderContext) -> str:
    return _boxed("Branch summary", str(get(message, "summary", "") or ""), rc)


def render_custom(message: Any, rc: RenderContext) -> str:
    """An extension's message: its type as the title and its text (nothing when not displayed)."""
    if get(message, "display", True) is False:
        return ""
    kind = str(get(message, "custom_type", "") or "custom")
    return _boxed(kind, content_text(get(message, "content")), rc, CUSTOM_LINES)
