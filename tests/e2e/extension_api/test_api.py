"""Unit tests of the ``ctx`` additions (issue 17, item 3): exec's env and input, agent_dir,
compact's callbacks, runtime subscriptions, runtime providers, session control without a mode,
sub-sessions, argument completion and plugin shortcuts."""

from __future__ import annotations

import asyncio
import sys

from tests.support.paths import SUPPORT
from tests.support.pi import run_pi
from tests.support.sdk import new_session

PLUGIN = str(SUPPORT / "control_plugin.py")


def run(coroutine):
    return asyncio.run(coroutine)


def test_exec_passes_environment_additions_and_stdin():
    async def main():
        session = await new_session()
        ctx = session.ctx
        fed = await ctx.exec(
            sys.executable, ["-c", "import sys; print(sys.stdin.read().upper())"], input="abc"
        )
        env = await ctx.exec(
            sys.executable,
            ["-c", "import os; print(os.environ.get('EXTRA'), os.environ.get('HOME'))"],
            env={"EXTRA": "added", "HOME": None},
        )
        quiet = await ctx.exec(sys.executable, ["-c", "import sys; print(repr(sys.stdin.read()))"])
        await session.close()
        return fed, env, quiet

    fed, env, quiet = run(main())
    assert fed["stdout"].strip() == "ABC" and fed["code"] == 0
    assert env["stdout"].split() == ["added", "None"]
    assert quiet["stdout"].strip() == "''"  # no input: stdin is empty, not the terminal


def test_print_mode_reports_a_session_switch_it_cannot_do(isolated_environment):
    done = run_pi("--model", "faux/faux-1", "-e", PLUGIN, "-p", "/mknew")
    assert "ctx.new_session needs a mode that can replace its session" in done.stderr
    assert "'print'" in done.stderr
