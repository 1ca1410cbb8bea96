"""The tmux harness itself: typing, keys, screen capture, exit status, exact environment."""

from __future__ import annotations

import os
import re
import sys
import time

import pytest

from tests.support.terminal import Terminal, cpu_seconds, tmux_available

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux >= 3.2 is not installed")

PROGRAM = r"""
import os, sys
name = input('name? ')
print('hi', name, '|', os.environ.get('TERM'), os.environ.get('ONLY_ME'), 'TMUX' in os.environ)
print('cwd', os.getcwd())
print('size', *os.get_terminal_size())
sys.exit(int(input('code? ') or 0))
"""


def test_send_wait_and_exit_status(tmp_path):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "ONLY_ME": "yes", "LANG": "C.UTF-8"}
    with Terminal([sys.executable, "-c", PROGRAM], env=env, cwd=tmp_path, width=60, height=12) as term:
        term.wait_for("name?")
        assert term.alive and not term.raw_mode()
        term.send("-Ada 'é' \"q\" ;x #{y}")
        term.press("Enter")
        screen = term.wait_for(re.compile(r"^code\?$", re.M), scrollback=False)
        assert "hi -Ada 'é' \"q\" ;x #{y} | xterm-256color yes False" in screen
        assert f"cwd {tmp_path}" not in screen  # wrapped at 60 columns...
        assert f"cwd {tmp_path}" in term.screen(joined=True)  # ...unless joined
        assert "size 60 12" in screen
        term.send("3")
        term.press("Enter")
        assert term.wait_exit(5) == 3
        assert "code? 3" in term.screen()  # the last screen stays readable after the exit
        assert not term.alive


def test_keys_control_bytes_and_timeout_message(tmp_path):
    with Terminal(["cat", "-v"], env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path, width=40, height=6) as term:
        term.send("a\x01b")
        term.press("Escape", "Enter")
        term.wait_for("a^Ab^[")
        term.press("C-d")
        assert term.wait_exit(5) == 0
        with pytest.raises(AssertionError) as failure:
            term.wait_for("never shown", timeout=0.2)
        assert "a^Ab^[" in str(failure.value) and "exited with status 0" in str(failure.value)


def test_scrollback_and_close(tmp_path):
    script = "for i in range(200): print('line', i)\ninput()"
    term = Terminal([sys.executable, "-c", script], env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path, height=10)
    try:
        term.wait_for("line 199")
        assert "line 0\n" not in term.screen()
        assert "line 0\n" in term.scrollback()
        term.wait_for("line 3\n")  # found above the screen
        with pytest.raises(AssertionError):
            term.wait_for("line 3\n", timeout=0.1, scrollback=False)
    finally:
        term.close()
    assert not os.path.exists(term.socket)


def test_ctrl_c_pid_and_cpu(tmp_path):
    with Terminal(["sleep", "30"], env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path) as term:
        # the pane starts a shell that execs the command: under load the exec can come later
        deadline = time.monotonic() + 5
        while True:
            with open(f"/proc/{term.pid}/cmdline", "rb") as handle:
                program = handle.read().split(b"\0")[0]
            if program == b"sleep" or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        assert program == b"sleep"
        assert 0 <= cpu_seconds(term.pid) < 1
        term.press("C-c")
        assert term.wait_exit(5) == 130  # 128 + SIGINT, as a shell reports it


def test_raw_mode(tmp_path):
    script = "import tty, sys; tty.setraw(0); print('raw', end='', flush=True); sys.stdin.read(1)"
    with Terminal([sys.executable, "-c", script], env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path) as term:
        term.wait_for("raw")
        assert term.raw_mode()
        term.send("q")
        assert term.wait_exit(5) == 0
