"""Text to safe HTML: escaping, Markdown (markdown-it) and code highlighting (pygments).

Everything a session holds is untrusted: Markdown is parsed with raw HTML disabled (so tags in a
message are shown, not run), markdown-it's link check drops ``javascript:``-style URLs, and
Markdown images become plain links so opening the page never fetches anything. markdown-it and
pygments are imported on first use: ``pi_host.lib.export`` stays cheap to import.
"""

from __future__ import annotations

import html
from functools import lru_cache
from typing import Any

STYLE = "github-dark"
"""The pygments style whose CSS is inlined in the page (a dark one, like the page)."""
MAX_HIGHLIGHT = 200_000
"""Longer code is shown escaped but not highlighted: a huge tool output would make the export
slow and the file several times larger for little benefit."""


def escape(text: Any) -> str:
    return html.escape(text if isinstance(text, str) else str(text), quote=True)


@lru_cache(maxsize=1)
def _markdown() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "breaks": True, "highlight": _highlight_fence})
    md.enable(["table", "strikethrough"])

    def image_as_link(_renderer: Any, tokens: Any, idx: int, _options: Any, _env: Any) -> str:
        token = tokens[idx]
        src = escape(token.attrGet("src") or "")
        alt = escape(token.content or "image")
        return f'<a class="md-image" href="{src}" rel="noopener noreferrer">[image: {alt}]</a>'

    md.add_render_rule("image", image_as_link)
    return md


def markdown(text: str) -> str:
    """Markdown source to an HTML fragment (fenced code highlighted)."""
    return _markdown().render(text)


def _highlight_fence(code: str, lang: str, _attrs: Any) -> str:
    return code_block(code, language=lang.strip().split()[0] if lang.strip() else None)


@lru_cache(maxsize=256)
def _lexer(language: str | None, filename: str | None) -> Any:
    from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        if language:
            return get_lexer_by_name(language)
        if filename:
            return get_lexer_for_filename(filename)
    except ClassNotFound:
        pass
    return None


@lru_cache(maxsize=1)
def _formatter() -> Any:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(nowrap=True)


def highlight(code: str, *, language: str | None = None, filename: str | None = None) -> str:
    """``code`` as HTML spans with pygments classes (plain escaped text when no lexer fits)."""
    lexer = _lexer(language, filename) if len(code) <= MAX_HIGHLIGHT else None
    if lexer is None:
        return escape(code)
    from pygments import highlight as run

    return run(code, lexer, _formatter())


def code_block(code: str, *, language: str | None = None, filename: str | None = None) -> str:
    """A ``<pre>`` block, highlighted when the language or file name has a lexer."""
    body = highlight(code, language=language, filename=filename)
    tag = f' data-lang="{escape(language)}"' if language else ""
    return f'<pre class="hl"{tag}><code>{body}</code></pre>\n'


def pygments_css() -> str:
    """The inlined CSS of :data:`STYLE`, scoped to ``.hl`` blocks."""
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(style=STYLE).get_style_defs(".hl")
