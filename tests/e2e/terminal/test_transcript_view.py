"""The transcript view (issue 31) in a real terminal: blocks expanded in place, search, resize,
theme, ``tuiMode: "fullscreen"``, and the inline editor coming back with its draft; Ctrl+O in
the inline transcript for earlier blocks and the compaction box's hint."""

from __future__ import annotations

import json
import re
import sys

from tests.support.interactive import PROMPT_READY, requires_tmux, terminal_pi
from tests.support.loopback import LoopbackServer, Reply, write_models_json
from tests.support.terminal import Terminal

pytestmark = requires_tmux


def _lines(prefix: str, count: int = 30) -> str:
    return f"for i in $(seq 1 {count}); do echo {prefix}$i; done"


def _two_tool_runs() -> list[Reply]:
    return [
        Reply.tool("bash", {"command": _lines("alpha")}),
        Reply("first run done"),
        Reply.tool("bash", {"command": _lines("omega")}),
        Reply("second run done"),
    ]


def _ask(term: Terminal, text: str, answer: str) -> None:
    term.send(text)
    term.press("Enter")
    term.wait_for(answer)


def _open_view(term: Terminal) -> str:
    term.press("M-o")
    return term.wait_for("q back", scrollback=False)


def test_the_second_to_last_tool_result_expands_in_place_and_leaving_keeps_the_draft(world):
    with LoopbackServer(_two_tool_runs()) as server, terminal_pi(world, server, height=40) as term:
        _ask(term, "run the first", "first run done")
        _ask(term, "run the second", "second run done")
        term.send("my unsent draft")
        screen = _open_view(term)
        assert "alpha1\n" not in screen + "\n"  # the preview shows the last lines only
        term.press("BTab")  # the last tool block
        term.press("BTab")  # the one before it
        term.press("Enter")
        term.wait_until(lambda s: re.search(r"^\S*\s*alpha1\s*$", s, re.M) is not None, what="alpha1")
        term.press("q")
        term.wait_for("my unsent draft", scrollback=False)
        screen = term.screen()
        assert re.search(r"›\s*my unsent draft", screen), screen


def test_search_finds_a_word_from_an_early_answer_and_jumps_to_it(world):
    replies = [Reply("the early answer mentions PELICAN once"), *[Reply.slow(300) for _ in range(3)]]
    with LoopbackServer(replies) as server, terminal_pi(world, server, height=24) as term:
        _ask(term, "first", "PELICAN")
        for n in range(3):
            term.send(f"filler {n}")
            term.press("Enter")
            term.wait_for("[25]")  # the last line of the slow answer
        _open_view(term)
        assert "PELICAN" not in term.screen()  # far above the view's end
        term.press("/")
        term.send("pelican")
        term.wait_for("PELICAN", scrollback=False)
        assert "search: pelican" in term.screen()


def test_resize_reflows_and_a_theme_change_recolours_older_output(world):
    long_line = " ".join(f"w{n}" for n in range(60))
    with LoopbackServer([Reply(long_line)]) as server, terminal_pi(world, server, width=100) as term:
        _ask(term, "say it", "w59")
        _open_view(term)
        term.wait_for("w59", scrollback=False)
        wide = max(len(line) for line in term.screen().splitlines() if "w1 " in line or "w30" in line)
        term.resize(50, 30)
        term.wait_until(
            lambda s: all(len(line.rstrip()) <= 50 for line in s.splitlines()) and "w59" in s, what="reflow"
        )
        assert wide > 50
        before = term.screen(ansi=True)
        term.press("q")
        term.wait_gone("q back")
        term.wait_for("loop/loop-1", scrollback=False)  # the footer: the editor is back
        (world["agent"] / "settings.json").write_text(json.dumps({"compaction": {"enabled": False}}))
        term.send("/settings")
        term.press("Enter")
        term.wait_for("Auto-compact", scrollback=False)
        term.send("Theme")
        term.press("Enter")
        term.wait_for(re.compile(r"^\W*light\s*$", re.M), scrollback=False)  # the theme list
        term.send("light")
        term.press("Enter")
        term.wait_for(re.compile(r"Theme\s+light"), scrollback=False)  # the settings list again
        term.press("Escape")
        term.wait_gone(re.compile(r"Theme\s+light"))
        term.send("/transcript")  # the command opens the view as Alt+O does
        term.press("Enter")
        term.wait_for("q back", scrollback=False)
        term.wait_for("w59", scrollback=False)
        after = term.screen(ansi=True)
        assert _colours(before, "say it") != _colours(after, "say it")


def _colours(screen: str, text: str) -> str:
    """The escape sequences on the line that holds ``text``."""
    line = next((line for line in screen.splitlines() if text in line), "")
    return "".join(re.findall(r"\x1b\[[0-9;]*m", line))


def test_tui_mode_fullscreen_starts_in_the_view(world):
    (world["agent"] / "settings.json").write_text(
        json.dumps({"compaction": {"enabled": False}, "tuiMode": "fullscreen"})
    )
    with LoopbackServer([Reply("hello")]) as server:
        path = write_models_json(world["agent"], server.url)
        assert path
        argv = [sys.executable, "-m", "pi_host", "--model", "loop/loop-1"]
        with Terminal(argv, env=world["env"], cwd=world["work"], width=100, height=30) as term:
            term.wait_for("q back", scrollback=False, timeout=20)
            term.press("q")
            term.wait_for(PROMPT_READY, scrollback=False)
            term.send("hi")
            term.press("Enter")
            term.wait_for("hello")


def test_ctrl_o_expands_the_compaction_summary_inline_and_the_view_expands_it_in_place(world):
    summary = "## Goal\n\n" + "\n\n".join(f"summary point {n}" for n in range(1, 13)) + "\n\nTHE-LAST-POINT"
    replies = [Reply("first answer"), Reply("second answer"), Reply(summary)]
    (world["agent"] / "settings.json").write_text(
        json.dumps({"compaction": {"enabled": False, "keepRecentTokens": 1}})
    )
    with LoopbackServer(replies) as server, terminal_pi(world, server, height=40) as term:
        _ask(term, "one", "first answer")
        _ask(term, "two", "second answer")
        term.send("/compact")
        term.press("Enter")
        term.wait_for("ctrl+o to expand")
        assert "THE-LAST-POINT" not in term.scrollback()  # the box shows the first lines
        term.press("C-o")  # what the box's hint says
        term.wait_for("THE-LAST-POINT")
        _open_view(term)
        assert "THE-LAST-POINT" not in term.screen()  # collapsed in the view, until expanded
        term.press("BTab")
        term.press("Enter")
        term.wait_for("THE-LAST-POINT", scrollback=False)


def test_escape_leaves_the_view_at_once_and_the_editor_has_its_draft(world):
    """Escape pressed as soon as the view shows: the inline application's flush of the Alt+O
    read, still pending then, must not take it (it did while both shared one input parser)."""
    with LoopbackServer([Reply("hello there")]) as server, terminal_pi(world, server) as term:
        _ask(term, "hi", "hello there")
        term.send("draft kept")
        for _ in range(3):
            _open_view(term)
            term.press("Escape")
            term.wait_gone("q back", timeout=2)
        term.wait_for("draft kept", scrollback=False)


def _terminal_with_clipboard(world, server: LoopbackServer) -> Terminal:
    """``terminal_pi`` in a tmux that keeps what the program copies with OSC 52 as a buffer (no
    clipboard tool runs here: the test's PATH has none on a display)."""
    write_models_json(world["agent"], server.url)
    argv = [sys.executable, "-m", "pi_host", "--model", "loop/loop-1"]
    env = {**world["env"], "PATH": "/usr/bin:/bin"}
    term = Terminal(argv, env=env, cwd=world["work"], height=40, config="set -s set-clipboard on\n")
    term.wait_for(PROMPT_READY, timeout=20)
    return term


def _click(term: Terminal, text: str) -> None:
    """A left click (SGR mouse report, as the terminal sends it) on the first row showing ``text``."""
    row = next(n for n, line in enumerate(term.screen().splitlines()) if text in line)
    column = term.screen().splitlines()[row].index(text)
    term.send(f"\x1b[<0;{column + 1};{row + 1}M\x1b[<0;{column + 1};{row + 1}m")


def test_a_block_is_copied_from_the_view(world):
    with LoopbackServer(_two_tool_runs()) as server, _terminal_with_clipboard(world, server) as term:
        _ask(term, "run the first", "first run done")
        _ask(term, "run the second", "second run done")
        _open_view(term)
        term.press("BTab")  # the last tool block
        term.press("y")
        term.wait_for("copied 31 lines (OSC 52)", scrollback=False)
        copied = term.tmux("show-buffer")
        assert "omega1\n" in copied and "omega30" in copied and "alpha" not in copied
        _click(term, "second run done")  # an answer: a click points at any block
        term.press("C-x")  # pi's copy key
        term.wait_for("copied 1 line (OSC 52)", scrollback=False)
        assert term.tmux("show-buffer").rstrip("\n") == "second run done"  # tmux ends its output with one


def test_ctrl_o_inline_prints_the_block_pointed_at_in_the_view(world):
    with LoopbackServer(_two_tool_runs()) as server, terminal_pi(world, server, height=40) as term:
        _ask(term, "run the first", "first run done")
        _ask(term, "run the second", "second run done")
        _open_view(term)
        term.press("BTab")
        term.press("BTab")  # the first run's output, pointed at
        term.press("Escape")
        term.wait_gone("q back")
        term.press("C-o")
        term.wait_for("selected in the transcript view")
        term.wait_until(
            lambda s: re.search(r"^\S*\s*alpha1\s*$", s, re.M) is not None, what="alpha1", scrollback=True
        )
        assert not re.search(r"^\S*\s*omega1\s*$", term.scrollback(), re.M)  # not the latest
