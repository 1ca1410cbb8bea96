"""pi-git-checkpoints: a snapshot of the work tree each turn, ``/rewind``, restore on ``/tree``.

In-process runs (the faux provider) check what is stored and restored; then the package is
installed by the real ``pi install`` into a throw-away environment and driven in print mode and in
a real terminal (tmux). Every run is in a temporary git repository whose branch, index and stash
list are compared before and after.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.support.examples import install_example
from tests.support.venv import venv_pi

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


def test_installed_by_pi_install_rewinds_in_print_mode(installed, repo):
    venv, install_env = installed
    listed = venv_pi(venv, "list", **install_env)
    assert "pi-git-checkpoints 0.1.0  [user]" in listed.stdout
    assert "    pi_host: git-checkpoints = pi_git_checkpoints" in listed.stdout
    rows = {r["name"]: r for r in json.loads(venv_pi(venv, "plugins", "--json").stdout)}
    assert rows["git-checkpoints"]["source"] == "installed"
    assert rows["git-checkpoints"]["origin"] == "pi-git-checkpoints"
    assert {"on_turn_start", "on_session_tree", "register_commands"} <= set(rows["git-checkpoints"]["hooks"])

    before, original = user_state(repo), files(repo)
    script = json.dumps([{"toolCalls": [write("a.txt", "written by the agent\n")]}, {"text": "done"}])
    run = venv_pi(venv, "-p", "--model", "faux/faux-1", "edit a", cwd=repo, PI_FAUX_SCRIPT=script)
    assert run.returncode == 0, run.stderr
    assert (repo / "a.txt").read_text() == "written by the agent\n"
    listing = venv_pi(venv, "-c", "-p", "/rewind", cwd=repo)
    assert re.search(r"^#1  \d\d:\d\d:\d\d  before “edit a”$", listing.stdout, re.M), listing.stdout
    rewound = venv_pi(venv, "-c", "-p", "/rewind 1", cwd=repo)
    assert rewound.returncode == 0, rewound.stderr
    assert "Restored the files to checkpoint #1" in rewound.stdout
    assert files(repo) == original
    assert user_state(repo) == before
    assert len(git("for-each-ref", "refs/pi-checkpoints/").splitlines()) == 3  # 2 turns + the undo
