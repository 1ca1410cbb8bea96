"""pi 1.6.0's fullscreen and pi-host's transcript view on the same session files, in the same
run, in a real terminal (a 100x30 tmux pane, ``tests/support/terminal.py``). Driven by
``bench/transcript_view.py``; the sides alternate run by run so that load falls on both alike.

Per side and session, one process per run:

- **open**: from just before ``tmux new-session`` until the first screen of the session is drawn
  and has been still for 0.3 s (the time it last changed). pi 1.6.0 resumes in fullscreen (its
  default); pi-host starts in the view (``tuiMode: "fullscreen"``). Both include the process's
  start-up and reading the session file.
- **page up**: PageUp pressed ``--keys`` times, each 0.15 s after the screen went still; the
  time from ``send-keys`` until the screen differs (polled as fast as ``capture-pane`` allows,
  about 2-4 ms a poll; the floor of the method).
- **key while streaming**: a prompt is sent (pi-host: from the editor, leaving the view with
  ``q`` and coming back with Alt+O) and the loopback model streams a long answer; once the
  transcript is scrolled off its end (one PageUp), PageUp/PageDown are pressed alternately and
  timed as above while the answer keeps streaming.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.loopback import LoopbackServer, Reply, write_models_json  # noqa: E402
from tests.support.pi_node import find_pi  # noqa: E402
from tests.support.terminal import Terminal, pi_env  # noqa: E402

WIDTH, HEIGHT = 100, 30
READY = {"pi-host": "transcript end", "pi": "────"}
"""Text that shows once each side has drawn its fullscreen transcript."""
TRANSCRIPT_ROWS = HEIGHT - 8
"""The rows compared: the transcript's, not the bottom ones (pi's spinner, editor and footer
change while an answer streams whatever the keys do; pi-host's status line)."""


def _rows(term: Terminal) -> list[str]:
    return term.screen(ansi=True).split("\n")[:TRANSCRIPT_ROWS]


def sides() -> dict[str, list[str]]:
    found = {"pi-host": [str(REPO / ".venv/bin/pi")]}
    pi = find_pi()
    if pi is not None:
        found["pi"] = list(pi)
    return found


def _still(term: Terminal, quiet: float, timeout: float = 60) -> float:
    """Until the screen has not changed for ``quiet`` s; when it last changed."""
    deadline = time.perf_counter() + timeout
    last, changed = _rows(term), time.perf_counter()
    while time.perf_counter() < deadline:
        time.sleep(0.01)
        screen, now = _rows(term), time.perf_counter()
        if screen != last:
            last, changed = screen, now
        elif now - changed >= quiet:
            return changed
    raise RuntimeError(f"the screen never went still:\n{term.screen()}")


def _key_latency(term: Terminal, key: str, timeout: float = 10) -> float:
    """ms from pressing ``key`` until the transcript's rows differ from the ones before."""
    before = _rows(term)
    start = time.perf_counter()
    term.press(key)
    while _rows(term) == before:
        time.sleep(0.001)  # leave the cores to the program (and tmux) between captures
        if time.perf_counter() - start > timeout:
            raise RuntimeError(f"{key} changed nothing in {timeout} s:\n{term.screen()}")
    return (time.perf_counter() - start) * 1000


def _wait(term: Terminal, needle: str, timeout: float = 120) -> None:
    deadline = time.perf_counter() + timeout
    while needle not in term.screen():
        if term.exit_status() is not None or time.perf_counter() > deadline:
            raise RuntimeError(f"{needle!r} never showed:\n{term.screen()}")
        time.sleep(0.005)


def one_run(side: str, argv: list[str], session: str, keys: int, results: dict[str, list[float]]) -> None:
    root = tempfile.mkdtemp(prefix=f"pi-tvbench-{side}-")
    agent, home, work = (os.path.join(root, name) for name in ("agent", "home", "work"))
    for directory in (agent, home, work):
        os.makedirs(directory)
    copy = os.path.join(root, "session.jsonl")
    shutil.copyfile(session, copy)  # a side may write to the file it resumed
    settings = {"compaction": {"enabled": False}, "tuiMode": "fullscreen"}
    Path(agent, "settings.json").write_text(json.dumps(settings))
    # one long answer, a word every 10 ms: it outlasts the key presses timed while it streams
    server = LoopbackServer([Reply.slow(6000, delay=0.01)]).start()
    write_models_json(agent, server.url)
    env = pi_env(home, agent, PI_SKIP_VERSION_CHECK="1", PI_OFFLINE="1")
    term = None
    try:
        start = time.perf_counter()
        term = Terminal(
            [*argv, "--model", "loop/loop-1", "--session", copy],
            env=env,
            cwd=work,
            width=WIDTH,
            height=HEIGHT,
        )
        _wait(term, READY[side])
        results["open"].append((_still(term, 0.3) - start) * 1000)
        for _ in range(keys):
            results["page up"].append(_key_latency(term, "PageUp"))
            _still(term, 0.15)
        if side == "pi-host":
            term.press("q")
            _wait(term, "loop/loop-1")
        term.press("C-End")  # back to the end, where the answer will show
        _still(term, 0.15)
        term.send("stream a long answer")
        term.press("Enter")
        _wait(term, "[3]")  # the answer streams
        if side == "pi-host":
            term.press("M-o")
            _wait(term, "transcript")
        term.press("PageUp")  # off the end: what streams no longer moves the screen
        _still(term, 0.15)
        for n in range(keys):
            results["key while streaming"].append(_key_latency(term, "PageUp" if n % 2 else "PageDown"))
            _still(term, 0.15)
    finally:
        if term is not None:
            term.close()
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


def measure(sessions: dict[str, str], runs: int, keys: int) -> dict[tuple[str, str], dict[str, list[float]]]:
    """``{(side, session name): {what: samples in ms}}``, the sides and sessions interleaved."""
    found: dict[tuple[str, str], dict[str, list[float]]] = {}
    programs = sides()
    for _ in range(runs):
        for name, path in sessions.items():
            for side, argv in programs.items():
                results = found.setdefault(
                    (side, name), {"open": [], "page up": [], "key while streaming": []}
                )
                try:
                    one_run(side, argv, path, keys, results)
                except RuntimeError as exc:
                    print(f"{side} on the {name} session failed: {exc}", file=sys.stderr)
    return found
