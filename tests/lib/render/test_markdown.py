"""Streaming Markdown: finished blocks render once, the output matches a one-shot render, and
``stable`` lines never change."""

from __future__ import annotations

import random
import re

import pytest

from pi_host.lib.render import (
    MarkdownStream,
    default_theme,
    render_markdown,
    split_blocks,
    strip_ansi,
    visible_width,
)

THEME = default_theme("truecolor")

WORDS = (
    "agent harness stream render block terminal width cache token model tool session plugin "
    "context summary branch delta layout prompt editor footer"
).split()


def document(words: int = 2000, seed: int = 7) -> str:
    """A Markdown text of about ``words`` words mixing every common block kind."""
    rng = random.Random(seed)
    count = 0
    parts: list[str] = []

    def sentence(n: int) -> str:
        nonlocal count
        count += n
        chosen = [rng.choice(WORDS) for _ in range(n)]
        chosen[0] = chosen[0].title()
        if n > 4:
            chosen[2] = f"**{chosen[2]}**"
            chosen[4] = f"`{chosen[4]}`"
        return " ".join(chosen) + "."

    section = 0
    while count < words:
        section += 1
        parts.append(f"## Section {section}")
        parts.append(" ".join(sentence(rng.randint(6, 14)) for _ in range(rng.randint(2, 4))))
        kind = section % 4
        if kind == 0:
            parts.append("\n".join(f"- {sentence(rng.randint(3, 8))}" for _ in range(3)))
        elif kind == 1:
            parts.append("\n".join(f"{i}. {sentence(rng.randint(3, 8))}" for i in range(1, 4)))
        elif kind == 2:
            body = "\n".join(f"    value_{i} = compute({i}, 'x')  # {rng.choice(WORDS)}" for i in range(4))
            parts.append(f"```python\ndef section_{section}():\n{body}\n    return value_0\n```")
        else:
            parts.append("> " + sentence(rng.randint(8, 16)))
        parts.append(sentence(rng.randint(10, 20)))
    return "\n\n".join(parts) + "\n"


def deltas(text: str, seed: int = 3):
    rng = random.Random(seed)
    position = 0
    while position < len(text):
        position = min(len(text), position + rng.randint(1, 16))
        yield text[:position]


def test_code_is_highlighted_and_headings_and_bold_are_styled():
    out = render_markdown(
        "# Title\n\nSome **bold** text.\n\n```python\ndef f(x):\n    return x\n```\n", 60, THEME
    )
    lines = out.split("\n")
    title = next(line for line in lines if "Title" in line)
    assert "\x1b[1" in title  # bold heading
    bold = next(line for line in lines if "bold" in strip_ansi(line))
    assert re.search(r"\x1b\[1m\s*bold", bold)
    code = next(line for line in lines if "def" in strip_ansi(line))
    assert "\x1b[38;2;" in code  # pygments colours
    assert "```python" in strip_ansi(out)
    assert all(visible_width(line) <= 60 for line in lines)
    assert all(line == line.rstrip(" ") for line in lines)  # rich's padding is gone


def test_no_color_keeps_text_without_colours():
    out = render_markdown("# Title\n\n**bold** and `code`\n\n```python\nx = 1\n```", 40, default_theme(None))
    assert "\x1b[38" not in out and "\x1b[48" not in out
    assert "bold" in strip_ansi(out) and "x = 1" in strip_ansi(out)


def test_streaming_renders_each_finished_block_once_and_matches_a_one_shot_render():
    text = document()
    assert len(text.split()) >= 2000
    stream = MarkdownStream()
    previous_stable = 0
    snapshots = []
    for prefix in deltas(text):
        rendered = stream.render(prefix, 80, THEME)
        lines = rendered.lines
        assert rendered.stable >= previous_stable
        assert rendered.stable <= len(lines)
        if rendered.stable == len(lines) and prefix.strip():  # the open block is never stable...
            open_block = split_blocks(prefix)[-1]
            assert not render_markdown(open_block.source, 80, THEME)  # ...it draws nothing yet ("## ")
        previous_stable = rendered.stable
        snapshots.append((lines, rendered.stable))
    final = stream.render(text, 80, THEME, final=True)
    assert final.stable == len(final.lines)
    assert final.text == render_markdown(text, 80, THEME)
    # every finished block went through rich exactly once
    assert max(stream.finished_counts.values()) == 1
    assert stream.finished_renders == len({block.source for block in split_blocks(text)})
    # stable lines were final: they are the same lines in the finished output
    for lines, stable in snapshots:
        assert lines[:stable] == final.lines[:stable]


def test_a_delta_renders_only_the_open_block():
    stream = MarkdownStream()
    text = "# One\n\nFirst paragraph.\n\nSecond"
    stream.render(text, 50, THEME)
    finished, opened = stream.finished_renders, stream.open_renders
    assert finished == 2
    stream.render(text + " paragraph grows", 50, THEME)
    assert stream.finished_renders == finished
    assert stream.open_renders == opened + 1


def test_a_width_change_renders_again():
    stream = MarkdownStream()
    text = "First paragraph with several words in it.\n\nSecond paragraph.\n\nOpen"
    wide = stream.render(text, 80, THEME)
    before = stream.finished_renders
    narrow = stream.render(text, 20, THEME)
    assert stream.finished_renders == before + 2
    assert narrow.text != wide.text
    assert all(visible_width(line) <= 20 for line in narrow.lines)
    stream.render(text + "!", 20, THEME)
    assert stream.finished_renders == before + 2


def test_an_unclosed_fence_is_the_open_block():
    text = "Intro paragraph.\n\n```python\ndef f():\n\n\n    return 1\n"
    blocks = split_blocks(text)
    assert [b.kind for b in blocks] == ["paragraph_open", "fence"]
    assert blocks[-1].source.endswith("    return 1")
    stream = MarkdownStream()
    rendered = stream.render(text, 60, THEME)
    assert rendered.stable == 1  # only the paragraph
    assert "return" in strip_ansi(rendered.text)
    closed = stream.render(text + "```\n\nAfter.", 60, THEME)
    assert closed.stable > rendered.stable
    assert strip_ansi(closed.lines[-1]) == "After."


def test_a_list_stays_open_while_the_next_line_may_still_be_an_item():
    stream = MarkdownStream()
    one = stream.render("1. first\n\n2", 40, THEME)
    assert one.stable == 0
    two = stream.render("1. first\n\n2. second", 40, THEME)
    assert two.stable == 0
    assert "second" in strip_ansi(two.text)


@pytest.mark.parametrize("width", [10, 33, 120])
def test_every_line_fits(width):
    out = render_markdown(document(300), width, THEME)
    assert all(visible_width(line) <= width for line in out.split("\n"))
