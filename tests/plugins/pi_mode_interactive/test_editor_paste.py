from __future__ import annotations

import asyncio

from pi_mode_interactive.editor.paste import PasteStore, bind_paste, insert_paste, normalize_paste
from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import BufferControl
from prompt_toolkit.output import DummyOutput


def lines(count: int) -> str:
    return "\n".join(f"line {number}" for number in range(1, count + 1))


def test_small_pastes_stay_inline():
    store = PasteStore()
    assert store.add(lines(10)) == lines(10)  # exactly 10 lines is not large
    assert store.add("x" * 1000) == "x" * 1000  # exactly 1000 chars is not large
    assert len(store) == 0


def test_large_pastes_become_numbered_markers():
    store = PasteStore()
    assert store.add(lines(11)) == "[paste #1 +11 lines]"
    assert store.add("y" * 1001) == "[paste #2 1001 chars]"
    # many characters on few lines: counted in chars
    assert store.add("a\n" + "b" * 1200) == "[paste #3 1202 chars]"
    assert len(store) == 3


def test_expand_replaces_markers_and_deleted_markers_drop():
    store = PasteStore()
    big = lines(20)
    other = "z" * 2000
    first = store.add(big)
    second = store.add(other)
    draft = f"please review:\n{first}\nand {second}"
    assert store.expand(draft) == f"please review:\n{big}\nand {other}"
    # user deleted the second marker from the draft: its content is simply not sent
    edited = f"only {first}"
    assert store.expand(edited) == f"only {big}"
    store.prune(edited)
    assert 1 in store and 2 not in store
    # a marker whose size suffix was edited away still expands; unknown numbers stay as typed
    assert store.expand("[paste #1] [paste #9 +3 lines]") == f"{big} [paste #9 +3 lines]"


def test_reset_restarts_numbering():
    store = PasteStore()
    store.add(lines(12))
    store.reset()
    assert len(store) == 0
    assert store.add(lines(12)) == "[paste #1 +12 lines]"


def test_normalize_paste_matches_pi_cleanup():
    assert normalize_paste("a\r\nb\rc") == "a\nb\nc"
    assert normalize_paste("\tindent") == "    indent"
    assert normalize_paste("bell\x07 \x1b[0m end") == "bell [0m end"
    # tmux CSI-u re-encoded control bytes inside a paste: ESC[106;5u is Ctrl+J (a newline)
    assert normalize_paste("one\x1b[106;5utwo") == "one\ntwo"


def test_insert_paste_adds_space_before_path_after_word():
    buffer = Buffer()
    buffer.insert_text("see")
    store = PasteStore()
    insert_paste(buffer, store, "/tmp/file.txt")
    assert buffer.text == "see /tmp/file.txt"
    buffer2 = Buffer()
    buffer2.insert_text("see ")
    insert_paste(buffer2, store, "/tmp/file.txt")
    assert buffer2.text == "see /tmp/file.txt"


async def _run(buffer: Buffer, store: PasteStore, keys: str) -> str:
    kb = KeyBindings()
    pasted: list[str] = []
    bind_paste(kb, buffer, store, on_paste=pasted.append)

    @kb.add("c-t")
    def _finish(event):
        event.app.exit(result=buffer.text)

    with create_pipe_input() as pipe:
        app = Application(
            layout=Layout(Window(BufferControl(buffer))), key_bindings=kb, input=pipe, output=DummyOutput()
        )
        pipe.send_text(keys)
        result = await asyncio.wait_for(app.run_async(), 5)
    assert pasted, "on_paste callback was not called"
    return result


async def test_bracketed_paste_in_app_collapses_and_expands():
    buffer = Buffer(multiline=True)
    store = PasteStore()
    big = lines(15)
    text = await _run(buffer, store, "check " + "\x1b[200~" + big + "\x1b[201~" + " please\x14")
    assert text == "check [paste #1 +15 lines] please"
    assert store.expand(text) == f"check {big} please"


async def test_small_bracketed_paste_is_inserted_verbatim():
    buffer = Buffer(multiline=True)
    store = PasteStore()
    text = await _run(buffer, store, "\x1b[200~two\r\nlines\x1b[201~\x14")
    assert text == "two\nlines"
    assert len(store) == 0


async def test_backspace_deletes_a_whole_marker():
    buffer = Buffer(multiline=True)
    store = PasteStore()
    keys = "x " + "\x1b[200~" + lines(12) + "\x1b[201~" + "\x7f" + "\x7f" + "\x14"
    text = await _run(buffer, store, keys)
    # first Backspace removes the marker atomically, the second removes the space
    assert text == "x"
    assert len(store) == 0
