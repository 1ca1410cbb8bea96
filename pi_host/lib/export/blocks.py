"""Content blocks and small pieces shared by the entry renderers (all output escaped)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from pi_host.lib.export.markup import code_block, escape, markdown

IMAGE_TYPES = re.compile(r"image/(png|jpeg|jpg|gif|webp|bmp)")
"""Raster types only: a data: URI of another type (SVG can carry script) is never emitted."""
BASE64 = re.compile(r"[A-Za-z0-9+/=\r\n]*")


def blocks_of(content: Any) -> list[dict[str, Any]]:
    """Message content as a list of blocks (a string is one text block; junk is dropped)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, list):
        return [b if isinstance(b, dict) else {"type": "text", "text": str(b)} for b in content]
    return []


def plain_text(content: Any) -> str:
    """The text blocks of ``content`` joined (for previews and tool outputs)."""
    return "\n".join(
        b["text"] for b in blocks_of(content) if b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def image(block: dict[str, Any]) -> str:
    mime = block.get("mimeType")
    data = block.get("data")
    if not isinstance(mime, str) or not IMAGE_TYPES.fullmatch(mime):
        return f'<p class="muted">[image of type {escape(mime)} not shown]</p>'
    if not isinstance(data, str) or not BASE64.fullmatch(data):
        return '<p class="muted">[image with unreadable data not shown]</p>'
    return f'<img class="image" alt="image ({escape(mime)})" src="data:{mime};base64,{data.strip()}">'


def thinking(block: dict[str, Any]) -> str:
    text = block.get("thinking")
    if block.get("redacted"):
        return '<details class="thinking"><summary>Thinking (redacted by the provider)</summary></details>'
    if not isinstance(text, str) or not text.strip():
        return ""
    return f'<details class="thinking"><summary>Thinking</summary><div class="md">{markdown(text)}</div></details>'


def content_html(content: Any, *, as_markdown: bool = True) -> str:
    """Text, image and thinking blocks in order; unknown blocks as their JSON."""
    parts = []
    for block in blocks_of(content):
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if isinstance(text, str) and text:
                parts.append(f'<div class="md">{markdown(text)}</div>' if as_markdown else preformatted(text))
        elif kind == "image":
            parts.append(image(block))
        elif kind == "thinking":
            parts.append(thinking(block))
        else:
            parts.append(json_block(block))
    return "".join(parts)


def preformatted(text: str, css: str = "output") -> str:
    return f'<pre class="{css}">{escape(text)}</pre>'


def json_block(value: Any) -> str:
    try:
        source = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        source = repr(value)
    return code_block(source, language="json")


def parse_time(value: Any) -> datetime | None:
    """An ISO entry timestamp or a message's ms timestamp, as an aware datetime."""
    try:
        if isinstance(value, str):
            parsed = datetime.fromisoformat(value)
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return datetime.fromtimestamp(value / 1000, tz=UTC)
    except (ValueError, OverflowError, OSError):
        pass
    return None


def time_tag(value: Any, fmt: str = "%H:%M:%S") -> str:
    """``<time>`` in UTC: the same text wherever the page is opened."""
    moment = parse_time(value)
    if moment is None:
        return ""
    moment = moment.astimezone(UTC)
    iso = moment.isoformat().replace("+00:00", "Z")
    return f'<time datetime="{escape(iso)}">{moment.strftime(fmt)}</time>'


def one_line(text: str, limit: int = 100) -> str:
    """Whitespace collapsed, cut at ``limit`` characters (for the sidebar and summaries)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def meta(who: str, *extra: str, css: str = "") -> str:
    """The line above a message: who, then whatever else is known (already HTML)."""
    rest = "".join(f" {piece}" for piece in extra if piece)
    return f'<div class="meta"><span class="who {css}">{escape(who)}</span>{rest}</div>'
