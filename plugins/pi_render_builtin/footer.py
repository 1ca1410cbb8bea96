"""The footer under the editor, like pi's: where (cwd, branch, session), what it cost (tokens,
cost, context use) and which model, then the plugins' statuses."""

from __future__ import annotations

from typing import Any

from pi_host.lib.render import (
    FooterInfo,
    RenderContext,
    format_cost,
    format_tokens,
    home_relative,
    sanitize,
    truncate,
    visible_width,
)


def _location(info: FooterInfo) -> str:
    text = home_relative(info.cwd or "")
    if info.git_branch:
        text += f" ({info.git_branch})"
    if info.session_name:
        text += f" • {info.session_name}"
    return sanitize(text).replace("\n", " ")


def _usage(info: FooterInfo, rc: RenderContext) -> str:
    theme = rc.theme
    parts = []
    if info.input_tokens:
        parts.append(f"↑{format_tokens(info.input_tokens)}")
    if info.output_tokens:
        parts.append(f"↓{format_tokens(info.output_tokens)}")
    if info.cache_read:
        parts.append(f"R{format_tokens(info.cache_read)}")
    if info.cache_write:
        parts.append(f"W{format_tokens(info.cache_write)}")
    if info.cost:
        parts.append(format_cost(info.cost))
    text = theme.fg("muted", " ".join(parts))
    window = info.context_window
    if window:
        used = info.context_tokens
        share = "?" if used is None else f"{used / window * 100:.1f}%"
        ctx = f"{share}/{format_tokens(window)}"
        colour = "muted"
        if used is not None and used / window > 0.9:
            colour = "error"
        elif used is not None and used / window > 0.7:
            colour = "warning"
        text += ("  " if parts else "") + theme.fg(colour, ctx)
    return text


def _models(info: FooterInfo) -> list[str]:
    """The model's label, longest first: ``provider/model • level``, without the provider, bare."""
    if not info.model:
        return [""]
    level = f" • {info.thinking_level or 'off'}" if info.reasoning else ""
    names = [f"{info.provider}/{info.model}{level}"] if info.provider else []
    names += [f"{info.model}{level}", info.model]
    return [sanitize(name).replace("\n", " ") for name in names]


def render_footer(info: Any, rc: RenderContext) -> str:
    theme = rc.theme
    width = max(1, rc.width)
    lines = [theme.fg("muted", truncate(_location(info), width))]
    left = _usage(info, rc)
    left_width = visible_width(left)
    names = _models(info)
    room = width - left_width - 2 if left_width else width
    name = next((n for n in names if visible_width(n) <= room), names[-1])
    right = theme.fg("muted", truncate(name, max(0, room))) if name and room > 0 else ""
    right_width = visible_width(right)
    if right:
        gap = width - left_width - right_width
        lines.append(left + " " * gap + right if left_width else " " * gap + right)
    else:
        lines.append(truncate(left, width))
    statuses = [
        sanitize(str(text), keep_style=True).replace("\n", " ")
        for _key, text in sorted(info.statuses.items())
        if text
    ]
    if statuses:
        lines.append(truncate(" ".join(statuses), width))
    return "\n".join(lines)
