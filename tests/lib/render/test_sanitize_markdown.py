"""The model's Markdown drawn for the terminal carries no escape sequence but the styles pi-host
itself draws with: whatever the answer contains, in any kind of block, finished or streaming."""

from __future__ import annotations

import re

import pytest

from pi_host.lib.render import MarkdownStream, default_theme, render_markdown, strip_ansi

THEME = default_theme("truecolor")
SGR_RE = re.compile(r"\x1b\[[0-9;:]*m")


def attacks(tag: str) -> str:
    return (
        f"\x1b]52;c;SEFDS0VE{tag}\x07"
        f"\x1b]0;PWNED-{tag}\x07\x1b]2;PWNED-{tag}\x1b\\"
        "\x1b[?1049h\x1b[6n\x1b[21t\x1b[2J"
        f"\x1b]8;;http://evil.example/{tag}\x1b\\link{tag}\x1b]8;;\x1b\\"
        f"\u009b?1049h\u009d2;PWNED-{tag}\u009c\u0090PWNED-{tag}\u009c\x1bPPWNED-{tag}\x1b\\"
        "\x1b(0\x1bc\x1b7\x1b#8\x07\x08\x0e\x01\x02\r"
    )


A = attacks("X")

BLOCKS = {
    "paragraph": f"Some {A}text VISIBLE here.",
    "heading": f"# Title {A}VISIBLE",
    "setext heading": f"Title {A}VISIBLE\n=====",
    "bullet list": f"- one {A}VISIBLE\n- two {A}",
    "ordered list": f"1. first {A}VISIBLE\n2. second",
    "nested list": f"- outer\n  - inner {A}VISIBLE",
    "quote": f"> quoted {A}VISIBLE\n> more",
    "table": f"| head {A} | h2 |\n|---|---|\n| cell {A}VISIBLE | c2 |",
    "code span": f"Use `code {A}VISIBLE` here.",
    "fenced code": f"```python\nx = 1  # {A}VISIBLE\n```",
    "fenced code, no language": f"```\nplain {A}VISIBLE\n```",
    "unclosed fence": f"```\nstill open {A}VISIBLE",
    "indented code": f"    indented {A}VISIBLE",
    "emphasis": f"*em {A}* and **strong {A}VISIBLE**",
    "inline link": f"[label {A}VISIBLE](http://evil.example/{A})",
    "link to a clean url": f"[label {A}VISIBLE](http://example.com/page)",
    "reference link": f"[label VISIBLE][r]\n\n[r]: http://evil.example/ '{A}'",
    "autolink": f"<http://evil.example/{A}> VISIBLE",
    "html": f"<div>{A}VISIBLE</div>",
    "hr then text": f"---\n\nafter {A}VISIBLE",
}


def only_styles(out: str) -> None:
    """Every escape in ``out`` is an SGR style; no other control character but line breaks."""
    rest = SGR_RE.sub("", out)
    bad = [ch for ch in rest if (ord(ch) < 0x20 and ch != "\n") or 0x7F <= ord(ch) <= 0x9F]
    assert bad == [], f"control characters in the output: {bad!r}"
    assert "\x1b]8" not in out  # no hyperlink escape at all, let alone one with the model's URL


@pytest.mark.parametrize("kind", sorted(BLOCKS))
def test_every_block_kind_is_drawn_without_escapes_and_keeps_its_text(kind):
    out = render_markdown(BLOCKS[kind], 100, THEME)
    only_styles(out)
    plain = strip_ansi(out)
    if kind == "html":  # rich leaves raw HTML out altogether
        assert plain == ""
        return
    assert "VISIBLE" in plain
    assert "PWNED" not in plain and "SEFDS0VE" not in plain
    if "link" not in kind and kind not in ("autolink", "reference link"):
        assert "linkX" in plain  # an OSC 8 link's text stays, its target goes


def test_a_whole_hostile_document_streams_without_escapes_at_every_step():
    text = "\n\n".join(BLOCKS.values())
    stream = MarkdownStream()
    for end in range(0, len(text) + 1, 7):  # cuts fall inside escape sequences too
        only_styles(stream.render(text[:end], 80, THEME).text)
    only_styles(stream.render(text, 80, THEME, final=True).text)


def test_pi_hosts_own_styles_survive():
    out = render_markdown("**bold** and `code`\n\n```python\nx = 1\n```", 80, THEME)
    assert "\x1b[1m" in out or re.search(r"\x1b\[[0-9;]*1[;m]", out)  # bold
    assert len(SGR_RE.findall(out)) > 4  # the inline code and the highlighted code are coloured
    assert strip_ansi(out).count("x = 1") == 1


def test_a_link_is_drawn_as_text_and_url_not_as_a_terminal_link():
    out = render_markdown("[docs](https://example.com/docs)", 80, THEME)
    assert "\x1b]8" not in out
    assert "docs" in strip_ansi(out) and "https://example.com/docs" in strip_ansi(out)


def test_carriage_returns_break_lines_instead_of_overwriting():
    plain = strip_ansi(render_markdown("```\nrm -rf ~/\rls\n```", 80, THEME))
    assert "rm -rf ~/" in plain and "ls" in plain


def test_a_hostile_answer_streamed_in_pieces_ends_as_the_one_shot_render():
    # (the table is left out: its row broken by a carriage return becomes a paragraph line
    # followed by a table, which MarkdownStream commits differently streamed than whole)
    text = "\n\n".join(v for k, v in BLOCKS.items() if k != "table").replace("\n", "\r\n", 3)
    stream = MarkdownStream()
    for end in range(0, len(text), 5):  # pieces end inside escapes and between \r and \n
        stream.render(text[:end], 80, THEME)
    assert stream.render(text, 80, THEME, final=True).text == render_markdown(text, 80, THEME)
