from __future__ import annotations

import asyncio

from pi_mode_interactive.editor.picker import Picker
from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.layout import HSplit, Layout, Window
from prompt_toolkit.layout.controls import BufferControl
from prompt_toolkit.output import DummyOutput

MODELS = [
    ("anthropic/claude-sonnet-4", "claude-sonnet-4", "anthropic"),
    ("openai/gpt-4o", "gpt-4o", "openai"),
    ("anthropic/claude-opus-4", "claude-opus-4", "anthropic"),
    ("google/gemini-2.5-pro", "gemini-2.5-pro", "google"),
    ("openai/o3", "o3", "openai"),
]


async def run_picker(keys: str, items=MODELS, *, with_editor: bool = False, **options):
    """Show a Picker in a small app; the app exits with the value on_done received."""
    calls: list[object] = []
    holder: dict[str, Application] = {}

    def on_done(value):
        calls.append(value)
        holder["app"].exit(result=value)

    picker = Picker("Select model", items, on_done, **options)
    if with_editor:
        # the picker sits above an editor; focus is moved into the picker container
        root = HSplit([picker.container, Window(BufferControl(Buffer()))])
    else:
        root = picker.container
    with create_pipe_input() as pipe:
        app = Application(layout=Layout(root), input=pipe, output=DummyOutput())
        app.ttimeoutlen = 0.05
        holder["app"] = app
        app.layout.focus(picker.container)
        pipe.send_text(keys)
        result = await asyncio.wait_for(app.run_async(), 5)
    assert calls == [result]  # on_done exactly once
    return result, picker


async def test_typing_filters_and_enter_picks():
    result, picker = await run_picker("opus\r")
    assert result == "anthropic/claude-opus-4"
    assert picker.query == "opus"
    assert picker.done and picker.result == "anthropic/claude-opus-4"


async def test_fuzzy_filter_text():
    result, _ = await run_picker("gm25\r")
    assert result == "google/gemini-2.5-pro"


async def test_escape_cancels_with_none():
    result, _ = await run_picker("gpt\x1b")
    assert result is None


async def test_ctrl_c_cancels():
    result, _ = await run_picker("\x03")
    assert result is None


async def test_arrow_keys_move_and_wrap():
    result, _ = await run_picker("\x1b[B\x1b[B\r")  # Down, Down
    assert result == "anthropic/claude-opus-4"
    result, _ = await run_picker("\x1b[A\r")  # Up from the first wraps to the last
    assert result == "openai/o3"


async def test_enter_with_no_matches_does_nothing_then_escape():
    result, picker = await run_picker("zzzz\r\x1b")
    assert result is None
    assert picker.filtered == []


async def test_works_when_focused_above_an_editor():
    result, _ = await run_picker("o3\r", with_editor=True)
    assert result == "openai/o3"


async def test_page_down_scrolls_the_visible_window():
    items = [(number, f"item {number:02d}", "") for number in range(30)]
    result, picker = await run_picker(
        "\x1b[6~\x1b[6~\x1b[B\r", items=items, max_visible=10
    )  # PgDn, PgDn, Down
    assert result == 21
    rows = picker.visible_rows()
    assert len(rows) == 10
    assert [item[0] for _, item in rows] == list(range(12, 22))
    assert [selected for selected, _ in rows].index(True) == 9


def test_scrolling_and_page_moves_unit():
    items = [(number, f"row {number}", "") for number in range(25)]
    picker = Picker("t", items, None, max_visible=5)
    assert [item[0] for _, item in picker.visible_rows()] == [0, 1, 2, 3, 4]
    picker.move(7, wrap=False)
    assert picker.selected_value == 7
    assert [item[0] for _, item in picker.visible_rows()] == [3, 4, 5, 6, 7]
    picker.move(100, wrap=False)
    assert picker.selected_value == 24
    picker.move(-100, wrap=False)
    assert picker.selected_value == 0
    assert picker.offset == 0


def test_initial_value_and_meta_matching():
    picker = Picker("t", MODELS, None, initial="google/gemini-2.5-pro")
    assert picker.selected_value == "google/gemini-2.5-pro"
    by_label = Picker("t", MODELS, None)
    by_label.filter_buffer.text = "google"
    assert by_label.filtered == []
    by_meta = Picker("t", MODELS, None, match_meta=True)
    by_meta.filter_buffer.text = "google"
    assert [value for value, _, _ in by_meta.filtered] == ["google/gemini-2.5-pro"]


async def test_wait_returns_the_value_and_finish_is_once():
    picker = Picker("t", MODELS, None)
    waiter = asyncio.ensure_future(picker.wait())
    await asyncio.sleep(0)
    picker.finish("openai/o3")
    picker.finish("ignored")
    assert await asyncio.wait_for(waiter, 1) == "openai/o3"
    assert picker.result == "openai/o3"


def test_custom_keymap_is_used():
    keymap = {"tui.select.confirm": ["tab"], "tui.select.cancel": [], "tui.select.down": ["ctrl+n"]}
    picker = Picker("t", MODELS, None, keymap=keymap)
    keys = {binding.keys for binding in picker.container.get_key_bindings().bindings}
    assert ("c-i",) in keys and ("c-n",) in keys
    assert ("c-m",) not in keys and ("escape",) not in keys
