"""pi-custom-footer: a one-line footer and a bash renderer built on ``pi_host.lib.render`` only.
Drawn directly, then installed by the real ``pi install`` and seen in a real terminal."""

from __future__ import annotations

import re

import pytest

from tests.support.interactive import PROMPT_READY
from tests.support.loopback import LoopbackServer, Reply, write_models_json
from tests.support.terminal import Terminal, tmux_available
from tests.support.venv import make_venv, pi_install_example

# --- the footer -----------------------------------------------------------------------------


@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_the_footer_and_the_bash_rendering_show_in_a_real_terminal(world, tmp_path):
    venv = make_venv(tmp_path / "venv")
    pi_install_example("pi-custom-footer", venv)
    git = world["work"] / ".git"
    git.mkdir()
    (git / "HEAD").write_text("ref: refs/heads/footer-branch\n")
    env = {k: v for k, v in world["env"].items() if k != "PYTHONPATH"}
    command = "sleep 1.5; for i in 1 2 3 4 5 6 7 8 9; do echo line-$i; done; exit 3"
    with LoopbackServer([Reply.tool("bash", {"command": command}), Reply("tool finished")]) as server:
        write_models_json(world["agent"], server.url)
        argv = [str(venv / "bin" / "pi"), "--model", "loop/loop-1"]
        with Terminal(argv, env=env, cwd=world["work"], width=110) as term:
            term.wait_for(PROMPT_READY, timeout=20)
            term.wait_for(
                re.compile(r"\nloop/loop-1 · ↑0 ↓0 · \$0\.000 · ⎇ footer-branch\n"), scrollback=False
            )
            term.send("count to nine")
            term.press("Enter")
            # while the command sleeps, the plugin's ticker redraws the turn time and the call
            live = term.wait_for(re.compile(r"running \d\.\ds(.|\n)*· turn 1\.\ds… ·"), scrollback=False)
            assert "$ sleep 1.5; for i in" in live
            term.wait_for("tool finished")
            term.wait_gone("esc to interrupt")
            footer = re.compile(
                r"loop/loop-1 · ↑[\d.]+k? ↓[\d.]+k? · \$0\.000 · ctx \d+% · turn \d+\.\ds · ⎇ footer-branch"
            )
            term.wait_for(footer, scrollback=False)
            shown = term.scrollback()
            coloured = term.scrollback(ansi=True)
            term.press("C-d")
            assert term.wait_exit() == 0
    assert f"$ {command}" in shown
    assert "│ … 3 earlier lines (ctrl+o to expand)" in shown
    assert "│ line-4" in shown and "│ line-9" in shown and "line-3" not in shown
    assert re.search(r"└ ✗ exit 3 · 1\.\ds", shown)
    assert "Command exited with code 3" not in shown  # the built-in renderer's line
    [status_line] = [line for line in coloured.splitlines() if "exit 3 ·" in line]
    assert re.search(r"\x1b\[[0-9;]*(38;2;204;102;102|38;5;167)[0-9;]*m└ ✗ exit 3", status_line), status_line
