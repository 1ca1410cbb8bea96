"""What the transcript view draws per frame (issue 31): a finished block is rendered once, not on
every key; what streams is drawn once per frame however often the view asks for it; and a
streaming answer renders each finished Markdown paragraph once, then only its open tail.
Counted calls, not timings."""

from __future__ import annotations

import types
from collections import Counter
from typing import Any

from pi_mode_interactive.fullview import live_drawer
from pi_mode_interactive.transcript import Item, Transcript
from pi_mode_interactive.transcript_source import SessionBlocks
from pi_mode_interactive.transcript_view import TranscriptView

from pi_host.lib.render import RenderContext
from pi_host.lib.render.theme import builtin_theme
from pi_host.protocol.messages import AssistantMessage, TextContent


class Store:
    """A branch of ``count`` user messages, each the child of the one before."""

    def __init__(self, count: int) -> None:
        self.entries = [
            {
                "type": "message",
                "id": f"e{n}",
                "parentId": f"e{n - 1}" if n else None,
                "message": {"role": "user", "content": f"prompt {n}", "timestamp": 0},
            }
            for n in range(count)
        ]

    def leaf_id(self) -> str:
        return self.entries[-1]["id"]

    def path(self) -> list[dict[str, Any]]:
        return list(self.entries)

    def get(self, entry_id: str) -> dict[str, Any] | None:
        return next((e for e in self.entries if e["id"] == entry_id), None)


class CountingRenderers:
    def __init__(self) -> None:
        self.drawn: Counter[str] = Counter()

    def message(self, message: Any, rc: RenderContext) -> str:
        text = message.content if isinstance(message.content, str) else "?"
        self.drawn[text] += 1
        return f"{text}\nsecond row"


def _rc(width: int, expanded: bool) -> RenderContext:
    return RenderContext(width=width, theme=builtin_theme("dark"), expanded=expanded, cwd="/", state={})


def test_keys_and_frames_render_a_finished_block_once_and_what_streams_once_per_frame():
    renderers = CountingRenderers()
    source = SessionBlocks(Store(200), renderers, _rc)
    live_calls: list[int] = []
    source.live = lambda width: live_calls.append(width) or ["streaming row 1", "streaming row 2"]
    view = TranscriptView(source, on_leave=lambda: None, paint=lambda name, text: text)
    frames = 12
    for _ in range(frames):
        for step in (-1, -5, 3, -20, 20):  # keys between frames pass the same blocks again
            view.scroll(step)
        view.bottom()
        source.sync()  # the application's before_render
        view.control.create_content(80, 20)
    assert renderers.drawn and max(renderers.drawn.values()) == 1
    assert len(renderers.drawn) < 30  # only the blocks near the end, of 200
    # once per frame at the text's width (and at a guessed width for the key before the first)
    assert len(live_calls) <= frames + 2 and set(live_calls[1:]) == {78}


def test_a_streaming_answer_renders_each_finished_paragraph_once(monkeypatch):
    import pi_render_builtin
    from pi_mode_interactive.transcript import Renderers

    from pi_host.lib.render import markdown

    rendered: Counter[str] = Counter()
    real = markdown.render_block

    def counting(text: str, width: int, theme: Any) -> list[str]:
        rendered[text] += 1
        return real(text, width, theme)

    monkeypatch.setattr(markdown, "render_block", counting)

    class Host:
        def collect_named(self, hook: str) -> list[tuple[str, Any]]:
            return [("pi_render_builtin", item) for item in pi_render_builtin.register_renderers()]

    renderers = Renderers(Host(), print)
    transcript = Transcript()
    holder = {"message": AssistantMessage(content=[])}
    transcript.add(Item(lambda rc: renderers.message(holder["message"], rc)))
    screen = types.SimpleNamespace(transcript=transcript, theme=builtin_theme("dark"), cwd="/")
    source = SessionBlocks(Store(5), renderers, _rc)
    source.live = live_drawer(screen)
    view = TranscriptView(source, on_leave=lambda: None, paint=lambda name, text: text)
    paragraphs = [f"Paragraph {n} says something about item {n}." for n in range(10)]
    for n in range(1, len(paragraphs) + 1):
        text = "\n\n".join(paragraphs[:n])
        holder["message"] = AssistantMessage(content=[TextContent(text=text)], stop_reason="pending")
        view.scroll(-1)
        view.bottom()
        source.sync()
        view.control.create_content(80, 20)
        assert any("Paragraph" in line for _, line in view.control.rows)
    # each paragraph is rendered while it is the open one and once finished, whatever the
    # frames and keys after (drawn from scratch, every frame rendered every paragraph again)
    assert set(rendered) == set(paragraphs) and max(rendered.values()) <= 3, rendered
    assert sum(rendered.values()) <= 2 * len(paragraphs) + 1, rendered
