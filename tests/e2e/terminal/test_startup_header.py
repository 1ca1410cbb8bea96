"""Interactive mode's start-up in a real terminal (issue 30, item 6): the loaded resources listed
in sections as pi does, the ``quietStartup`` setting that hides them, and the question about a
project whose ``.pi/`` resources are not trusted yet."""

from __future__ import annotations

import json
import os
import sys

import pytest

from tests.support.interactive import requires_tmux, terminal_pi
from tests.support.loopback import LoopbackServer, write_models_json
from tests.support.terminal import Terminal

pytestmark = requires_tmux

EXTENSION = "from pi_host import hookimpl\n\n\n@hookimpl\ndef register_commands():\n    return []\n"


def _resources(world):
    work, agent = world["work"], world["agent"]
    (work / "AGENTS.md").write_text("Use tabs.")
    (agent / "AGENTS.md").write_text("Global rules.")
    (agent / "prompts").mkdir()
    (agent / "prompts" / "review.md").write_text("---\ndescription: Review\n---\nReview $1.")
    (work / ".pi" / "prompts").mkdir(parents=True)
    (work / ".pi" / "prompts" / "proj.md").write_text("A project prompt.")
    skill = agent / "skills" / "lint-fix"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: lint-fix\ndescription: Fix the lint\n---\nRun ruff.")
    (work / ".pi" / "extensions").mkdir()
    (work / ".pi" / "extensions" / "hello_ext.py").write_text(EXTENSION)


def test_start_up_lists_context_files_skills_prompts_extensions_and_theme_problems(world):
    _resources(world)
    settings = json.loads((world["agent"] / "settings.json").read_text())
    (world["agent"] / "settings.json").write_text(json.dumps({**settings, "theme": "no-such-theme"}))
    with LoopbackServer([]) as server, terminal_pi(world, server, "--approve") as term:
        term.wait_for("[Extensions]")
        screen = term.screen()
        term.press("C-d")
        assert term.wait_exit() == 0
    sections = {}
    for block in screen.split("\n["):
        title, _, body = block.partition("]")
        sections[title.strip("[")] = " ".join(body.split())
    global_file = str(world["agent"] / "AGENTS.md")
    assert sections["Context"].startswith(f"{global_file}, AGENTS.md")  # the project's, relative
    assert sections["Skills"].startswith("lint-fix")
    assert sections["Prompts"].startswith("/proj, /review")
    assert sections["Extensions"].startswith("hello_ext.py")
    assert "no-such-theme" in sections["Themes"]


def _started(world, server, *args):
    """pi-host once its footer is drawn (``terminal_pi`` waits for the banner, which may be hidden)."""
    write_models_json(world["agent"], server.url)
    argv = [sys.executable, "-m", "pi_host", "--model", "loop/loop-1", *(args or ("--approve",))]
    term = Terminal(argv, env=world["env"], cwd=world["work"], width=100, height=30)
    term.wait_for("loop/loop-1", timeout=20)
    return term


@pytest.mark.parametrize("quiet", [True, "header"])
def test_quiet_startup_hides_the_resources(world, quiet):
    _resources(world)
    settings = json.loads((world["agent"] / "settings.json").read_text())
    (world["agent"] / "settings.json").write_text(json.dumps({**settings, "quietStartup": quiet}))
    with LoopbackServer([]) as server, _started(world, server) as term:
        term.send("/session")
        term.press("Enter")
        term.wait_for("messages:")  # the start-up is over by the time a command has answered
        screen = term.screen()
        term.press("C-d")
        assert term.wait_exit() == 0
    assert "[Context]" not in screen and "[Skills]" not in screen and "[Extensions]" not in screen
    assert ("pi-host" in screen) == (quiet == "header")  # "header" keeps the version line
    assert "model: loop/loop-1" not in screen


@pytest.mark.parametrize("answer", ["Trust", "Do not trust"])
def test_an_untrusted_project_is_asked_about_at_start(world, answer):
    _resources(world)
    with LoopbackServer([]) as server, _started(world, server, "--no-session") as term:
        term.wait_for("Trust this project folder?")
        term.wait_for(".pi/extensions, .pi/prompts")  # what is at stake
        if answer == "Do not trust":
            term.press("Down", "Down")
        term.press("Enter")
        term.wait_for("[Extensions]" if answer == "Trust" else "[Prompts]")
        term.wait_for("ctrl+d exit")  # the banner follows the answer
        screen = term.screen()
        term.press("C-d")
        assert term.wait_exit() == 0
    saved = json.loads((world["agent"] / "trust.json").read_text())
    assert saved.get(os.path.realpath(world["work"])) is (answer == "Trust")
    # trusted: the project's prompt and extension load at once; not: only the global prompt
    assert ("/proj" in screen) == ("hello_ext.py" in screen) == (answer == "Trust")
    assert "/review" in screen
