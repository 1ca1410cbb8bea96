"""A read of one ESC byte is the Escape key at once; sequences and Alt+key are left whole."""

from __future__ import annotations

from pi_mode_interactive.escape_input import escape_at_once
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.keys import Keys


def _keys(pipe, data: bytes) -> list:
    pipe.send_bytes(data)
    return [press.key for press in pipe.read_keys()]


def test_without_the_wrapper_a_lone_escape_waits_for_the_timeout():
    with create_pipe_input() as pipe:
        assert _keys(pipe, b"\x1b") == []  # held until ttimeoutlen flushes it (the 50 ms)
        assert [press.key for press in pipe.flush_keys()] == [Keys.Escape]


def test_a_lone_escape_is_handed_over_at_once_and_sequences_stay_whole():
    with create_pipe_input() as pipe:
        escape_at_once(pipe)
        escape_at_once(pipe)  # twice is once
        assert _keys(pipe, b"\x1b") == [Keys.Escape]
        assert _keys(pipe, b"\x1b[A") == [Keys.Up]
        assert _keys(pipe, b"\x1bx") == [Keys.Escape, "x"]  # Alt+x: one read, both keys together
        assert _keys(pipe, b"a") == ["a"]
        assert _keys(pipe, b"\x1b") == [Keys.Escape]
