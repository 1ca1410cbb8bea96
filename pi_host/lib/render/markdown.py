"""Markdown to ANSI text, incrementally for a streaming answer.

The text is split into top-level blocks (markdown-it block tokens at nesting level 0). Every
block but the last is finished: it is rendered once (with rich) and cached on its source and the
width, so a delta re-renders only the open block. rich, markdown-it and pygments are imported on
the first render, never when this module is imported.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pi_host.lib.render.ansi import RESET, truncate, visible_width
from pi_host.lib.render.context import Rendered
from pi_host.lib.render.controls import strip_controls
from pi_host.lib.render.theme import Theme, default_theme

__all__ = ["Block", "MarkdownStream", "clean_source", "render_markdown", "split_blocks"]

_LIST_TYPES = ("bullet_list_open", "ordered_list_open")
_TRAILING_BLANK_RE = re.compile(r"(?:[ \t]|\x1b\[[0-9;:]*m)+$")


@dataclass(frozen=True)
class Block:
    source: str
    kind: str
    """The markdown-it token type that opened the block (``paragraph_open``, ``fence``...)."""
    start: int
    """First source line (0-based) of the block in the text that was split."""


@lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt

    # The same rules rich renders with, so the blocks split here are the blocks it draws.
    parser = MarkdownIt("commonmark").enable("table").enable("strikethrough")
    parser.core.ruler.disable(["inline", "text_join"], ignoreInvalid=True)  # blocks are enough
    return parser


def split_blocks(text: str) -> list[Block]:
    """The top-level blocks of ``text`` in order (an unclosed code fence runs to the end)."""
    if not text.strip():
        return []
    lines = text.split("\n")
    blocks = []
    for token in _parser().parse(text):
        if token.level == 0 and token.map and token.nesting >= 0:
            start, end = token.map
            blocks.append(Block("\n".join(lines[start:end]), token.type, start))
    return blocks


def _open_count(blocks: list[Block], committed: int) -> int:
    """How many trailing blocks may still change: the last one, and the one before it when that
    is a list the last block could still join (``2`` becoming ``2. item``)."""
    if len(blocks) <= committed:
        return 0  # committed blocks never reopen
    last = blocks[-1]
    if len(blocks) - 2 >= committed and blocks[-2].kind in _LIST_TYPES and last.kind == "paragraph_open":
        first_line = last.source.split("\n", 1)[0].strip()
        if len(last.source.split("\n")) == 1 and not any(c.isspace() for c in first_line):
            return 2
    return 1


@lru_cache(maxsize=8)
def _rich_markdown_class() -> Any:
    from rich.markdown import CodeBlock, Heading, ListItem, Markdown
    from rich.segment import Segment
    from rich.syntax import Syntax
    from rich.text import Text

    class _CodeBlock(CodeBlock):
        """Fenced code between muted fence lines, highlighted, without a background box."""

        def __rich_console__(self, console: Any, options: Any) -> Any:
            code = str(self.text).rstrip("\n")
            language = "" if self.lexer_name == "text" else self.lexer_name
            yield Text("```" + language, style="markdown.fence")
            if code:
                yield Syntax(
                    code,
                    self.lexer_name,
                    theme=self.theme,
                    word_wrap=True,
                    background_color="default",
                    padding=0,
                )
            yield Text("```", style="markdown.fence")

    class _ListItem(ListItem):
        """An ordered item keeps its number's dot (``1.``, as written and as pi shows it); an
        empty one still shows its number (an answer that is only ``7.`` is not blank)."""

        def render_number(self, console: Any, options: Any, number: int, last_number: int) -> Any:
            width = len(str(last_number)) + 2
            lines = console.render_lines(
                self.elements, options.update(width=options.max_width - width), style=self.style
            )
            style = console.get_style("markdown.item.number", default="none")
            numeral = Segment(f"{number}.".rjust(width - 1) + " ", style)
            padding = Segment(" " * width, style)
            for index, line in enumerate(lines or [[]]):
                yield numeral if index == 0 else padding
                yield from line
                yield Segment("\n")

    class _Heading(Heading):
        LEVEL_ALIGN = {f"h{level}": "left" for level in range(1, 7)}  # noqa: RUF012

    class _Markdown(Markdown):
        elements = {  # noqa: RUF012
            **Markdown.elements,
            "fence": _CodeBlock,
            "code_block": _CodeBlock,
            "heading_open": _Heading,
            "list_item_open": _ListItem,
        }

    return _Markdown


def _rich_theme(theme: Theme) -> Any:
    from rich.theme import Theme as RichTheme

    def spec(*parts: str) -> str:
        words = [p for p in parts if p]
        return " ".join(words) or "none"

    c = theme.rich_color
    return RichTheme(
        {
            "markdown.h1": spec("bold underline", c("heading")),
            "markdown.h2": spec("bold", c("heading")),
            "markdown.h3": spec("bold", c("heading")),
            "markdown.h4": spec("bold italic", c("heading")),
            "markdown.h5": spec("italic", c("heading")),
            "markdown.h6": spec("italic", c("muted")),
            "markdown.code": spec(c("inline_code")),
            "markdown.code_block": "none",
            "markdown.fence": spec(c("muted")),
            "markdown.link": spec("underline", c("link")),
            "markdown.link_url": spec("underline", c("muted")),
            "markdown.block_quote": spec("italic", c("quote")),
            "markdown.item.bullet": spec(c("accent")),
            "markdown.item.number": spec(c("accent")),
            "markdown.hr": spec(c("muted")),
            "markdown.table.border": spec(c("border")),
            "markdown.table.header": spec("bold", c("accent")),
        }
    )


@lru_cache(maxsize=16)
def _console(width: int, theme: Theme) -> Any:
    import io

    from rich.console import Console

    return Console(
        file=io.StringIO(),
        width=width,
        force_terminal=True,
        force_jupyter=False,
        force_interactive=False,
        color_system=theme.color_system or "truecolor",
        no_color=theme.no_color,
        theme=_rich_theme(theme),
        legacy_windows=False,
        emoji=False,
        highlight=False,
        soft_wrap=False,
        _environ={},
    )


def _tidy_line(line: str) -> str:
    """A rendered line without rich's padding to the width (an open style is reset)."""
    match = _TRAILING_BLANK_RE.search(line)
    if match is None:
        return line
    head = line[: match.start()]
    if "\x1b[" in match.group() and "\x1b[" in head and not head.endswith(RESET):
        head += RESET
    return head if visible_width(head) else ""


def render_block(source: str, width: int, theme: Theme) -> list[str]:
    """One block of Markdown as ANSI lines of at most ``width`` columns (no blank edges)."""
    width = max(1, width)
    console = _console(width, theme)
    from pi_host.lib.render.themes import pygments_style

    code_theme = pygments_style(theme) or theme.code_theme  # a theme file's own syntax colours
    markdown = _rich_markdown_class()(source, code_theme=code_theme, hyperlinks=False)
    with console.capture() as capture:
        console.print(markdown)
    lines = [_tidy_line(line) for line in capture.get().split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return [truncate(line, width) if visible_width(line) > width else line for line in lines]


def clean_source(text: str) -> str:
    """Markdown from a model with nothing a terminal would act on: escape sequences go with their
    payload, control characters but tab and line break go, and a lone carriage return is a line
    break (as CommonMark reads it), never an overwrite. rich passes escapes in its input through,
    so the text is cleaned before it is parsed; rich itself then adds only SGR styles (links are
    drawn as ``text (url)``, never as OSC 8)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return strip_controls(text)


OPEN_TAIL_CHARS = 2000
"""A block still being written is drawn from at most its last this many characters: only its
tail is on screen while it streams, and a long paragraph re-rendered whole per delta would cost
time quadratic in its length. Once finished it is rendered whole (and cached)."""


def _tail_of_open(block: Block) -> str:
    source = block.source
    if len(source) <= OPEN_TAIL_CHARS:
        return source
    if block.kind == "fence":  # keep the opening fence, so the tail is still highlighted code
        opener, _, body = source.partition("\n")
        tail = body[-OPEN_TAIL_CHARS:]
        return opener + "\n" + tail[tail.find("\n") + 1 :]
    tail = source[-OPEN_TAIL_CHARS:]
    cut = min((i for i in (tail.find(" "), tail.find("\n")) if i >= 0), default=0)
    return "… " + tail[cut + 1 :]


class MarkdownStream:
    """Renders one growing Markdown text; keep one per streaming text block (``rc.state``).

    ``finished_renders`` / ``open_renders`` count rich renders, and ``finished_counts`` how often
    each finished block's source was rendered (once per width)."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, int, Theme], list[str]] = {}
        self._open_cache: dict[tuple[str, int, Theme], list[str]] = {}
        self._committed: list[Block] = []
        self._committed_prefix = ""
        self._cleaned: tuple[str, str] = ("", "")
        """A prefix of the raw text that ends at a line break, and its clean form."""
        self.finished_renders = 0
        self.open_renders = 0
        self.finished_counts: Counter[str] = Counter()

    @property
    def renders(self) -> int:
        return self.finished_renders + self.open_renders

    def _clean(self, text: str) -> str:
        """:func:`clean_source` of ``text``, cleaning only what came after the last line break
        of the text before: a delta costs its own length, not the whole answer's (no control
        sequence spans a line break, so the pieces clean as the whole would)."""
        raw, clean = self._cleaned
        if not (raw and text.startswith(raw)):
            raw, clean = "", ""
        cut = text.rfind("\n", len(raw)) + 1
        if cut > len(raw):
            clean += clean_source(text[len(raw) : cut])
            raw = text[:cut]
            self._cleaned = (raw, clean)
        return clean + clean_source(text[len(raw) :])

    def _blocks(self, text: str) -> tuple[list[Block], int, int]:
        """All blocks, how many were committed before, and the text offset past them."""
        prefix = self._committed_prefix
        if prefix and text.startswith(prefix):
            base, offset = self._committed, len(prefix)
        else:
            base, offset = [], 0
        return base + split_blocks(text[offset:]), len(base), offset

    def render(self, text: str, width: int, theme: Theme | None = None, *, final: bool = False) -> Rendered:
        """``text`` as ANSI lines; ``stable`` counts the lines of the finished blocks (all of
        them when ``final``: the text will not grow again)."""
        theme = theme or default_theme()
        text = self._clean(text)
        blocks, committed, offset = self._blocks(text)
        open_count = 0 if final else _open_count(blocks, committed)
        finished = blocks[: len(blocks) - open_count]
        cache: dict[tuple[str, int, Theme], list[str]] = {}
        out: list[str] = []
        for block in finished:
            key = (block.source, width, theme)
            lines = self._cache.get(key)
            if lines is None:
                lines = render_block(block.source, width, theme)
                self.finished_renders += 1
                self.finished_counts[block.source] += 1
            cache[key] = lines
            if out and lines:
                out.append("")
            out.extend(lines)
        stable = len(out)
        open_cache: dict[tuple[str, int, Theme], list[str]] = {}
        for block in blocks[len(finished) :]:
            key = (block.source, width, theme)
            lines = self._open_cache.get(key)
            if lines is None:
                lines = self._cache.get(key)
            if lines is None:
                lines = render_block(_tail_of_open(block), width, theme)
                self.open_renders += 1
            open_cache[key] = lines
            if out and lines:
                out.append("")
            out.extend(lines)
        self._cache = cache
        self._open_cache = open_cache
        if not final:
            self._commit(text, blocks, committed, offset, len(finished))
        return Rendered("\n".join(out), len(out) if final else stable)

    def _commit(self, text: str, blocks: list[Block], committed: int, offset: int, done: int) -> None:
        """Remember the finished blocks so the next delta parses only the text after them."""
        if done <= committed or done >= len(blocks):
            if done < committed:
                self._committed, self._committed_prefix = [], ""
            return
        first_open = blocks[done]  # its start line counts from ``offset``
        rest = text[offset:]
        cut = 0
        for _ in range(first_open.start):
            cut = rest.index("\n", cut) + 1
        self._committed = blocks[:done]
        self._committed_prefix = text[: offset + cut]

    def reset(self) -> None:
        self.__init__()


def render_markdown(text: str, width: int, theme: Theme | None = None) -> str:
    """``text`` (complete Markdown) as ANSI lines of at most ``width`` columns."""
    return MarkdownStream().render(text, width, theme, final=True).text
