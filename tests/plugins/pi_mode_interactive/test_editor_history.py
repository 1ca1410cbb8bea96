from __future__ import annotations

import asyncio
import json
import os

from pi_mode_interactive.editor.history import PromptHistory, history_path
from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import HSplit, Layout, Window
from prompt_toolkit.layout.controls import BufferControl
from prompt_toolkit.output import DummyOutput
from prompt_toolkit.widgets import SearchToolbar


def load(history: PromptHistory) -> list[str]:
    """Newest first, like prompt_toolkit's History.load()."""
    return list(history.load_history_strings())


def test_history_path_is_in_agent_dir(tmp_path):
    assert history_path(tmp_path) == tmp_path / "prompt-history.jsonl"


def test_multiline_and_unicode_prompts_round_trip(tmp_path):
    path = tmp_path / "agent" / "prompt-history.jsonl"
    history = PromptHistory(path, cwd="/some/project")
    history.append_string("first line\nsecond line")
    history.append_string("weird \u2028 separator and ünïcode")
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""  # ends with a newline
    assert len(lines) == 3  # exactly one physical line per prompt
    record = json.loads(lines[0])
    assert record["text"] == "first line\nsecond line"
    assert record["cwd"] == "/some/project"
    assert record["ts"].endswith("Z") and "T" in record["ts"]

    again = PromptHistory(path)
    assert load(again) == ["weird \u2028 separator and ünïcode", "first line\nsecond line"]


def test_corrupt_lines_are_skipped_and_file_is_never_rewritten(tmp_path):
    path = tmp_path / "prompt-history.jsonl"
    content = (
        b'{"text": "good one", "cwd": "/", "ts": "x"}\n'
        b"{not json\n"
        b'["a list"]\n'
        b'{"text": 42}\n'
        b'{"text": "   "}\n'
        b"\xff\xfe garbage\n"
        b'{"text": "good two"}\n'
    )
    path.write_bytes(content)
    history = PromptHistory(path)
    assert load(history) == ["good two", "good one"]
    assert path.read_bytes() == content


def test_consecutive_duplicates_are_not_stored(tmp_path):
    path = tmp_path / "h.jsonl"
    history = PromptHistory(path)
    for text in ["a", "a", "  a  ", "b", "a", "", "   "]:
        history.append_string(text)
    texts = [json.loads(line)["text"] for line in path.read_text().splitlines()]
    assert texts == ["a", "b", "a"]
    assert history.get_strings() == ["a", "b", "a"]


def test_duplicate_of_last_entry_in_file_not_stored_after_loading(tmp_path):
    path = tmp_path / "h.jsonl"
    PromptHistory(path).append_string("same")
    history = PromptHistory(path)
    load(history)
    history.append_string("same")
    assert len(path.read_text().splitlines()) == 1


def test_loading_collapses_duplicates_and_keeps_last_entries(tmp_path):
    path = tmp_path / "h.jsonl"
    with path.open("w") as handle:
        for index in range(1500):
            handle.write(json.dumps({"text": f"prompt {index}"}) + "\n")
            if index % 100 == 0:
                handle.write(json.dumps({"text": f"prompt {index}"}) + "\n")
    history = PromptHistory(path)
    entries = load(history)
    assert len(entries) == 1000
    assert entries[0] == "prompt 1499"
    assert entries[-1] == "prompt 500"
    assert len(set(entries)) == 1000

    small = PromptHistory(path, max_entries=3)
    assert load(small) == ["prompt 1499", "prompt 1498", "prompt 1497"]


def test_append_after_truncated_line_starts_a_new_line(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_bytes(b'{"text": "ok"}\n{"text": "cut off by a cra')
    history = PromptHistory(path)
    history.append_string("after crash")
    assert load(PromptHistory(path)) == ["after crash", "ok"]


def test_each_append_is_a_single_write_with_o_append(tmp_path, monkeypatch):
    path = tmp_path / "h.jsonl"
    calls: list[tuple[int, bytes]] = []
    opened_flags: list[int] = []
    real_write, real_open = os.write, os.open

    def spy_write(fd, data):
        calls.append((fd, bytes(data)))
        return real_write(fd, data)

    def spy_open(file, flags, *args, **kwargs):
        opened_flags.append(flags)
        return real_open(file, flags, *args, **kwargs)

    monkeypatch.setattr(os, "write", spy_write)
    monkeypatch.setattr(os, "open", spy_open)
    history = PromptHistory(path)
    history.append_string("one\ntwo")
    history.append_string("three")
    assert len(calls) == 2
    assert all(data.endswith(b"\n") and data.count(b"\n") == 1 for _, data in calls)
    assert all(flags & os.O_APPEND for flags in opened_flags)


def test_unwritable_history_never_raises(tmp_path):
    path = tmp_path / "dir-in-the-way"
    path.mkdir()
    history = PromptHistory(path)
    history.append_string("kept in memory")
    assert history.last_error is not None
    assert history.get_strings() == ["kept in memory"]
    assert load(PromptHistory(path)) == []


def test_two_sessions_share_the_file(tmp_path):
    path = tmp_path / "h.jsonl"
    first = PromptHistory(path, cwd="/a")
    second = PromptHistory(path, cwd="/b")
    first.append_string("from a")
    second.append_string("from b")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(r["text"], r["cwd"]) for r in records] == [("from a", "/a"), ("from b", "/b")]


async def _run_editor(buffer: Buffer, keys: str) -> str:
    """Run a tiny app around ``buffer`` with Ctrl+R search; Ctrl+T returns the buffer text."""
    search = SearchToolbar()
    kb = KeyBindings()

    @kb.add("c-t")
    def _finish(event):
        event.app.exit(result=buffer.text)

    layout = Layout(HSplit([Window(BufferControl(buffer, search_buffer_control=search.control)), search]))
    with create_pipe_input() as pipe:
        app = Application(layout=layout, key_bindings=kb, input=pipe, output=DummyOutput())
        task = asyncio.ensure_future(app.run_async())
        await asyncio.sleep(0.2)  # let the buffer load its history
        pipe.send_text(keys)
        return await asyncio.wait_for(task, 5)


async def test_ctrl_r_reverse_search_finds_an_older_entry(tmp_path):
    path = tmp_path / "h.jsonl"
    writer = PromptHistory(path)
    for text in ["deploy to staging", "run the unit tests", "fix the flaky test", "write docs"]:
        writer.append_string(text)
    buffer = Buffer(history=PromptHistory(path), multiline=True)
    result = await _run_editor(buffer, "\x12staging\r\x14")  # Ctrl+R, query, Enter, Ctrl+T
    assert result == "deploy to staging"


async def test_up_arrow_prefix_search_with_enable_history_search(tmp_path):
    path = tmp_path / "h.jsonl"
    writer = PromptHistory(path)
    for text in ["fix the bug", "add a feature", "format code"]:
        writer.append_string(text)
    buffer = Buffer(history=PromptHistory(path), enable_history_search=True, multiline=False)
    result = await _run_editor(buffer, "fix\x1b[A\x14")  # type prefix, Up, Ctrl+T
    assert result == "fix the bug"
