"""pi-git-checkpoints: a snapshot of the work tree each turn, ``/rewind``, restore on ``/tree``.

In-process runs (the faux provider) check what is stored and restored; then the package is
installed by the real ``pi install`` into a throw-away environment and driven in print mode and in
a real terminal (tmux). Every run is in a temporary git repository whose branch, index and stash
list are compared before and after.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.support.examples import install_example
from tests.support.interactive import PROMPT_READY
from tests.support.loopback import LoopbackServer, Reply, write_models_json
from tests.support.terminal import Terminal, tmux_available

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Test User",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test User",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, timeout=30
    ).stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A throw-away environment with pi-git-checkpoints installed by its own ``pi install``
    (its home and agent dir are temporary too: the manifest is written there)."""
    done = install_example(tmp_path_factory, "pi-git-checkpoints")
    assert done.output.splitlines() == ["Installed pi-git-checkpoints 0.1.0 (provides: git-checkpoints)"]
    return done.venv, done.env


@pytest.fixture
def repo(isolated_environment, monkeypatch):
    """A repository in the test's work dir: a commit, a stash, a staged file, an untracked file
    and an ignored one."""
    work = isolated_environment["work"]
    (isolated_environment["home"] / "gitconfig").write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(isolated_environment["home"] / "gitconfig"))
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(work.parent))
    for key, value in GIT_IDENTITY.items():
        monkeypatch.setenv(key, value)
    git("init", "-q", "-b", "main")
    (work / "a.txt").write_text("one\n")
    (work / ".gitignore").write_text("*.log\n")
    git("add", ".")
    git("commit", "-q", "-m", "first")
    (work / "a.txt").write_text("stashed\n")
    git("stash", "-q")
    (work / "staged.txt").write_text("staged\n")
    git("add", "staged.txt")
    (work / "untracked.txt").write_text("untracked\n")
    (work / "build.log").write_text("ignored\n")
    return work


def user_state(work: Path) -> dict:
    """What the user owns: branch, HEAD, every non-checkpoint ref, the index (bytes), the stash."""
    return {
        "branch": git("symbolic-ref", "HEAD", cwd=work),
        "head": git("rev-parse", "HEAD", cwd=work),
        "refs": [r for r in git("for-each-ref", cwd=work).splitlines() if "refs/pi-checkpoints/" not in r],
        "index": (work / ".git" / "index").read_bytes(),
        "stash": git("stash", "list", cwd=work),
    }


def files(work: Path) -> dict[str, str]:
    return {
        str(p.relative_to(work)): p.read_text()
        for p in sorted(work.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(work).parts
    }


def write(path: str, content: str) -> dict:
    return {"name": "write", "arguments": {"path": path, "content": content}}


@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_interactive_tree_offers_the_restore_and_rewind_picks_a_checkpoint(installed, repo, world):
    venv, _ = installed
    before, original = user_state(repo), files(repo)
    env = {k: v for k, v in world["env"].items() if k != "PYTHONPATH"}
    env.update(GIT_IDENTITY, GIT_CONFIG_GLOBAL=os.environ["GIT_CONFIG_GLOBAL"])
    replies = [Reply.tool("write", {"path": "a.txt", "content": "agent text\n"}), Reply("all written")]
    with LoopbackServer(replies) as server:
        write_models_json(world["agent"], server.url)
        argv = [str(venv / "bin" / "pi"), "--model", "loop/loop-1"]
        with Terminal(argv, env=env, cwd=repo, width=110, height=34) as term:
            term.wait_for(PROMPT_READY, timeout=20)
            term.send("change a")
            term.press("Enter")
            term.wait_for("all written")
            term.wait_gone("esc to interrupt")
            assert (repo / "a.txt").read_text() == "agent text\n"
            term.send("/tree")
            term.press("Enter")
            term.wait_for("Session tree")
            term.send("change a")  # search: the user message
            term.wait_for(re.compile(r"›.*user: change a"), scrollback=False)
            term.press("Enter")
            term.wait_for("Summarize branch?")
            term.press("Enter")  # No summary
            term.wait_for("Restore the files too?")
            term.send("y")
            term.wait_for("Restored the files to checkpoint #1")
            assert files(repo) == original
            term.wait_for(re.compile(r"change a\s*$", re.M), scrollback=False)  # back in the editor
            term.press("C-c")  # clear it
            term.send("/rewind")
            term.press("Enter")
            term.wait_for("Restore the files to a checkpoint")
            screen = term.wait_for("your files before restoring #1", scrollback=False)
            assert "before “change a”" in screen
            term.press("Enter")  # the newest: the files the /tree restore replaced
            term.wait_for("Restored the files to checkpoint #3")
            assert (repo / "a.txt").read_text() == "agent text\n"
            term.press("C-d")
            assert term.wait_exit() == 0
    assert user_state(repo) == before
