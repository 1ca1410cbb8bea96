"""The ``/`` and ``@`` menus as pi draws them (issue 30): under the editor, the footer still on
screen below them, in the active theme's colours (the chosen row in the accent, descriptions
muted), the highlight moved by the arrows without touching the draft."""

from __future__ import annotations

import json
import re
import time

from pi_host.lib.render.themes import load_theme
from tests.support.interactive import requires_tmux, terminal_pi, user_texts
from tests.support.loopback import LoopbackServer, Reply

pytestmark = requires_tmux

SGR = re.compile(r"\x1b\[([0-9;]*)m")


def _colour(world, name: str) -> str:
    """The SGR parameters the light theme gives ``name`` in this terminal (256 colours)."""
    theme, _ = load_theme(
        "light",
        agent_dir=str(world["agent"]),
        cwd=str(world["work"]),
        project_trusted=True,
        environ=world["env"],
    )
    return SGR.match(theme.fg(name, "x"))[1]


def _layout(screen: str) -> tuple[int, list[int], int]:
    """Rows of the editor's first line, of the menu's rows, and of the footer's last line."""
    lines = screen.splitlines()
    editor = max(i for i, line in enumerate(lines) if line.startswith("›"))
    footer = max(i for i, line in enumerate(lines) if line.rstrip().endswith("loop/loop-1"))
    menu = [i for i, line in enumerate(lines) if i > editor and re.match(r"(→ | {2})[^\s(]", line)]
    return editor, menu, footer


def _row(screen: str, prefix: str) -> str:
    return next(line for line in screen.splitlines() if SGR.sub("", line).startswith(prefix))


def _coloured_menu(term) -> str:
    """The screen with its colours once the menu is on it (a redraw of the menu, when the
    templates finish loading in the background, may fall between two captures)."""
    deadline = time.monotonic() + 10
    while True:
        coloured = term.screen(ansi=True)
        if any(SGR.sub("", line).startswith("→ ") for line in coloured.splitlines()):
            return coloured
        if time.monotonic() > deadline:
            raise AssertionError(f"no chosen menu row on the screen:\n{coloured}")
        time.sleep(0.05)


def test_the_menus_sit_under_the_editor_above_the_footer_in_the_themes_colours(world):
    settings = {"compaction": {"enabled": False}, "theme": "light"}
    (world["agent"] / "settings.json").write_text(json.dumps(settings))
    prompts = world["agent"] / "prompts"
    prompts.mkdir()
    (prompts / "alpha-one.md").write_text("---\ndescription: The first template\n---\nFirst template.")
    (prompts / "alpha-two.md").write_text("---\ndescription: The second template\n---\nSecond template.")
    (world["work"] / "src").mkdir()
    (world["work"] / "src" / "main.py").write_text("")
    accent, muted = _colour(world, "accent"), _colour(world, "muted")
    with LoopbackServer([Reply("second ran")]) as server:
        with terminal_pi(world, server) as term:
            term.send("/")
            screen = term.wait_for(re.compile(r"^  \(1/\d+\)$", re.M), scrollback=False)
            editor, menu, footer = _layout(screen)
            # pi's place: rows under the editor, the footer (cwd and model lines) after them and
            # not covered (prompt-toolkit's floating menu was drawn over it)
            assert len(menu) == 5, screen  # autocompleteMaxVisible's default
            assert editor < menu[0] and menu[-1] < footer, screen
            lines = screen.splitlines()
            assert lines[footer - 1].strip() and "(1/" not in lines[footer - 1], screen  # the cwd line
            assert lines[menu[0]].startswith("→ quit"), screen  # bare names, the first one chosen

            coloured = _coloured_menu(term)
            assert "48;5" not in "".join(coloured.splitlines()[menu[0] : footer]), coloured  # no grey boxes
            chosen = _row(coloured, "→ ")
            assert SGR.match(chosen)[1] == accent, repr(chosen)  # the whole chosen row in the accent
            other = _row(coloured, "  hotkeys")
            assert f"\x1b[{muted}m" in other, repr(other)  # descriptions muted
            term.press("Escape")
            term.wait_gone("(1/")

            term.send("alpha")
            term.wait_for("The second template")
            term.press("Down")  # moves the highlight; the draft stays what was typed
            term.wait_until(lambda text: _row(text, "→ ").startswith("→ alpha-two"), what="alpha-two chosen")
            assert "› /alpha" in term.screen()
            term.press("Enter")  # runs the chosen entry, not the first one
            term.wait_for("second ran")

            term.send("see @mai")
            screen = term.wait_for(re.compile(r"^→ main\.py +src/main\.py$", re.M), scrollback=False)
            editor, menu, footer = _layout(screen)
            assert editor < menu[0] <= menu[-1] < footer, screen
            term.press("Enter")  # takes the file, the line goes on
            term.wait_until(lambda text: "› see @src/main.py" in text, what="the mention inserted")
            term.press("C-u")
            term.press("C-d")
            assert term.wait_exit() == 0
    assert user_texts(server.requests[0])[-1] == "Second template."
