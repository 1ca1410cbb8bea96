"""The plugin development loop: ``pi install ./folder`` installs by reference (pip's editable
install), so an edit of the plugin's code is used by the next run and by ``/reload`` in a running
session, with no second install. (How long the install takes: ``bench/packages_local_install.py``.)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pi_host.rpc import RpcClient
from tests.support.interactive import PROMPT_READY
from tests.support.terminal import Terminal, tmux_available
from tests.support.venv import make_venv, venv_pi

PYPROJECT = """\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "pi-word"
version = "0.1.0"

[project.entry-points.pi_host]
word = "pi_word"
"""
PLUGIN = """\
from pi_host import hookimpl
from pi_host.plugins.registrations import Command

from pi_word.words import WORD


async def reload_now(args, ctx):
    await ctx.reload()


@hookimpl
def register_commands():
    return [Command("reload-now", reload_now, "ctx.reload()"), Command("word", lambda a, c: None, WORD)]
"""


def word_project(root: Path) -> Path:
    (root / "pi_word").mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "pi_word" / "__init__.py").write_text(PLUGIN)
    set_word(root, "one")
    return root


def set_word(project: Path, word: str) -> None:
    # within a second of the import, and for /reload the same length: the byte-code cache's check
    # (whole seconds and size) would take the old code for the new
    (project / "pi_word" / "words.py").write_text(f"WORD = {word!r}\n")


def rpc(venv: Path) -> RpcClient:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return RpcClient(
        [str(venv / "bin" / "pi"), "--mode", "rpc"],
        args=["--model", "faux/faux-1", "--no-session"],
        env=env,
        timeout=60,
    )


def word(client: RpcClient) -> str:
    commands = client.call("get_commands")["commands"]
    return next(c["description"] for c in commands if c["name"] == "word")


def test_a_local_folder_is_installed_by_reference(tmp_path, isolated_environment):
    agent = isolated_environment["agent"]
    venv = make_venv(tmp_path / "venv")
    project = word_project(tmp_path / "pi-word")

    # no --no-build-isolation from the user: pi-host sees that hatchling is here and skips isolation
    out = venv_pi(venv, "install", "--no-index", os.path.relpath(project))
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Installed pi-word 0.1.0 (provides: word)\n"
    [entry] = json.loads((agent / "pi-host-packages.json").read_text())["packages"]
    assert (entry["spec"], entry["editable"]) == (str(project), True)
    assert venv_pi(venv, "list").stdout.splitlines()[:2] == [
        "pi-word 0.1.0  [user]",
        f"    from: {project}  (by reference)",
    ]

    client = rpc(venv)
    try:
        assert word(client) == "one"
        set_word(project, "two")
        client.prompt_and_wait("/reload-now")
        assert word(client) == "two"
    finally:
        client.close()

    # the next run, with nothing reinstalled (another length: a new process trusts Python's own
    # byte-code check, which a same-size edit within the second of the reload's import defeats)
    set_word(project, "seven")
    client = rpc(venv)
    try:
        assert word(client) == "seven"
    finally:
        client.close()

    # the same loop in the terminal: the built-in /reload picks up an edit of the folder
    if tmux_available():
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        argv = [str(venv / "bin" / "pi"), "--model", "faux/faux-1", "--no-session"]
        with Terminal(argv, env=env, cwd=tmp_path, width=100, height=30) as term:
            term.wait_for(PROMPT_READY, timeout=30)
            term.send("/wor")
            term.wait_for("seven")  # the command's description in the / menu
            term.press("C-u")
            set_word(project, "reloaded-word")
            term.send("/reload")
            term.press("Enter")
            term.wait_for("Reloaded")
            term.send("/wor")
            term.wait_for("reloaded-word")
            term.press("C-u")
            term.press("C-d")
            assert term.wait_exit() == 0

    removed = venv_pi(venv, "remove", "pi-word")
    assert removed.stdout == "Removed pi-word 0.1.0\n", removed.stderr
    assert json.loads((agent / "pi-host-packages.json").read_text())["packages"] == []
    assert not [p for p in venv.glob("lib/python*/site-packages/*") if "pi_word" in p.name]
    assert (project / "pi_word" / "words.py").exists()  # the folder itself is the user's


def test_copy_installs_a_snapshot(tmp_path, isolated_environment):
    agent = isolated_environment["agent"]
    venv = make_venv(tmp_path / "venv")
    project = word_project(tmp_path / "pi-word")
    out = venv_pi(venv, "install", "--no-index", "--copy", str(project))
    assert out.returncode == 0, out.stderr
    [entry] = json.loads((agent / "pi-host-packages.json").read_text())["packages"]
    assert entry["editable"] is False
    set_word(project, "two")
    client = rpc(venv)
    try:
        assert word(client) == "one"
    finally:
        client.close()
