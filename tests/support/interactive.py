"""``pi``'s interactive mode in a real terminal against the loopback model (for tests under
``tests/e2e/terminal/``): the ``world`` fixture's folders and environment, starting ``pi`` in a
tmux pane, and reading back the session files and the requests the model received.

    def test_x(world):
        with LoopbackServer([Reply("hi")]) as server, terminal_pi(world, server) as term:
            term.send("hello"); term.press("Enter"); term.wait_for("hi")
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.loopback import LoopbackServer, write_models_json
from tests.support.terminal import Terminal, pi_env, tmux_available

PROMPT_READY = "ctrl+d exit"
"""Text of the start-up hint: the editor takes keys once it shows."""

requires_tmux = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


@pytest.fixture
def world(isolated_environment) -> dict[str, Any]:
    """The test's agent dir and working directory, and the exact environment ``pi`` runs in
    (compaction off, so a long answer never triggers it)."""
    agent, work, home = (
        isolated_environment["agent"],
        isolated_environment["work"],
        isolated_environment["home"],
    )
    (agent / "settings.json").write_text(json.dumps({"compaction": {"enabled": False}}))
    return {"agent": agent, "work": work, "env": pi_env(home, agent)}


LOOP_THINK = {"id": "loop-think", "name": "Loopback Think", "reasoning": True, "contextWindow": 128000}
"""A second, reasoning model of the ``loop`` provider, for the pickers (faux is not offered there
unless in use)."""


def terminal_pi(
    world: dict[str, Any], server: LoopbackServer, *args: str, width=100, height=30, models=()
) -> Terminal:
    """``pi --model loop/loop-1 <args>`` in a ``width`` x ``height`` terminal, once its editor is
    ready; ``models`` are added to the ``loop`` provider (e.g. :data:`LOOP_THINK`)."""
    path = write_models_json(world["agent"], server.url)
    if models:
        config = json.loads(Path(path).read_text())
        config["providers"]["loop"]["models"] += list(models)
        Path(path).write_text(json.dumps(config))
    argv = [sys.executable, "-m", "pi_host", "--model", "loop/loop-1", *args]
    terminal = Terminal(argv, env=world["env"], cwd=world["work"], width=width, height=height)
    terminal.wait_for(PROMPT_READY, timeout=20)
    return terminal


def user_texts(body: dict[str, Any]) -> list[str]:
    """The user messages' texts of one chat-completions request body."""
    out = []
    for message in body["messages"]:
        if message["role"] == "user":
            content = message["content"]
            out.append(content if isinstance(content, str) else "".join(p.get("text", "") for p in content))
    return out


def session_files(world: dict[str, Any]) -> list[Path]:
    return sorted((world["agent"] / "sessions").rglob("*.jsonl"))


def entries(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def open_app(options: Any, prompts: tuple[str, ...] = ()) -> tuple[Any, Any]:
    """The interactive application in this process, built the way the mode builds it (a real
    session factory and mode run; the session built with the app's UI): ``(app, session)``.
    Draw it inside ``create_app_session`` with a pipe input."""
    from pi_mode_interactive.app import InteractiveApp
    from pi_mode_interactive.ctx_ui import InteractiveUI

    from pi_host.plugins.modes import ModeRun
    from pi_host.runtime.factory import SessionFactory

    run = ModeRun(SessionFactory(options), list(prompts), [], None, None)
    ui = InteractiveUI()
    session = await run.open_session(ui=ui)
    run.host = session.host
    return InteractiveApp(run, ui), session
