"""pi-git-checkpoints: a snapshot of the work tree each turn, ``/rewind``, restore on ``/tree``.

In-process runs (the faux provider) check what is stored and restored; then the package is
installed by the real ``pi install`` into a throw-away environment and driven in print mode and in
a real terminal (tmux). Every run is in a temporary git repository whose branch, index and stash
list are compared before and after.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pi_provider_faux as faux
import pytest

import pi_host
from pi_host.plugins.loading import load_file_plugin
from tests.support.examples import example_module, install_example

CHECKPOINTS = example_module("pi-git-checkpoints", "pi_git_checkpoints")
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


def checkpoint_entries(session) -> list[dict]:
    return [
        e for e in session.store.entries() if e["type"] == "custom" and e["customType"] == "git-checkpoint"
    ]


async def new_session(**settings):
    plugin = load_file_plugin(CHECKPOINTS)
    return await pi_host.create_session(model="faux/faux-1", plugins=[plugin], settings=settings)


async def test_each_turn_is_a_checkpoint_of_the_user_message_with_untracked_files(repo):
    before = user_state(repo)
    faux.set_responses([{"toolCalls": [write("a.txt", "two\n")]}, {"text": "done"}])
    session = await new_session()
    await session.prompt("change a")
    [user] = [e for e in session.store.entries() if e.get("message", {}).get("role") == "user"]
    first, second = [e["data"] for e in checkpoint_entries(session)]
    assert (first["userEntryId"], second["userEntryId"]) == (user["id"], user["id"])
    assert (first["n"], first["turn"], second["n"], second["turn"]) == (1, 0, 2, 1)
    assert first["ref"] == f"refs/pi-checkpoints/{session.session_id}/1"
    assert git("rev-parse", first["ref"]).strip() == first["commit"]
    snapshot = git("ls-tree", "-r", "--name-only", first["commit"]).split()
    assert snapshot == [".gitignore", "a.txt", "staged.txt", "untracked.txt"]  # not build.log
    assert git("show", f"{first['commit']}:a.txt") == "one\n"
    assert git("show", f"{second['commit']}:a.txt") == "two\n"  # after the write
    assert git("rev-parse", f"{first['commit']}^").strip() == before["head"].strip()
    assert user_state(repo) == before
    sent = json.dumps([str(m) for r in faux.requests for m in r["messages"]])
    assert "git-checkpoint" not in sent and "pi-checkpoints" not in sent  # never sent to the model


async def test_rewind_restores_the_files_and_the_restore_can_be_undone(repo, capsys):
    before = user_state(repo)
    original = files(repo)
    faux.set_responses(
        [
            {"toolCalls": [write("a.txt", "two\n"), write("new/deep.txt", "new\n")]},
            {"toolCalls": [{"name": "bash", "arguments": {"command": "rm untracked.txt"}}]},
            {"text": "done"},
        ]
    )
    session = await new_session()
    await session.prompt("change things")
    changed = files(repo)
    assert changed["a.txt"] == "two\n" and "untracked.txt" not in changed
    capsys.readouterr()
    assert await session.prompt("/rewind") == "handled"
    listed = capsys.readouterr().out.splitlines()
    assert listed[0] == "Checkpoints (newest first):" and listed[-1] == "Restore one with /rewind <n>"
    assert [row.split()[0] for row in listed[1:-1]] == ["#3", "#2", "#1"]
    assert listed[-2].endswith("before “change things”")
    await session.prompt("/rewind 1")
    out = capsys.readouterr().out
    assert "Restored the files to checkpoint #1 (3 changed)" in out and "/rewind 4 undoes this" in out
    assert files(repo) == original  # the staged, untracked and ignored files included
    assert not (repo / "new").exists()
    await session.prompt("/rewind 4")
    assert "Restored the files to checkpoint #4" in capsys.readouterr().out
    assert files(repo) == changed
    await session.prompt("/rewind 99")
    assert "No checkpoint #99" in capsys.readouterr().out
    assert user_state(repo) == before


async def test_tree_navigation_restores_the_files_of_that_point(repo):
    faux.set_responses(
        [
            {"toolCalls": [write("a.txt", "two\n")]},
            {"text": "wrote two"},
            {"toolCalls": [write("a.txt", "three\n")]},
            {"text": "wrote three"},
        ]
    )
    session = await new_session(gitCheckpoints={"restoreOnTree": "always"})
    await session.prompt("write two")
    await session.prompt("write three")
    users = [e["id"] for e in session.store.entries() if e.get("message", {}).get("role") == "user"]
    [answer_two] = [
        e["id"]
        for e in session.store.entries()
        if e.get("message", {}).get("role") == "assistant" and "wrote two" in json.dumps(e["message"])
    ]
    assert (repo / "a.txt").read_text() == "three\n"
    await session.navigate_tree(users[1])  # re-ask the second prompt: the files from before it
    assert (repo / "a.txt").read_text() == "two\n"
    await session.navigate_tree(users[0])
    assert (repo / "a.txt").read_text() == "one\n"
    await session.navigate_tree(answer_two)  # an answer: the files as that answer left them
    assert (repo / "a.txt").read_text() == "two\n"
    kinds = [e["data"]["kind"] for e in checkpoint_entries(session)]
    assert kinds.count("before-restore") == 3  # every restore saved the files first


async def test_without_a_ui_tree_navigation_leaves_the_files_alone_by_default(repo):
    faux.set_responses([{"toolCalls": [write("a.txt", "two\n")]}, {"text": "wrote"}])
    session = await new_session()
    await session.prompt("write two")
    [user] = [e["id"] for e in session.store.entries() if e.get("message", {}).get("role") == "user"]
    await session.navigate_tree(user)
    assert (repo / "a.txt").read_text() == "two\n"
    assert [e["data"]["kind"] for e in checkpoint_entries(session)] == ["turn", "turn"]


# --- installed by `pi install` ---------------------------------------------------------------


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A throw-away environment with pi-git-checkpoints installed by its own ``pi install``
    (its home and agent dir are temporary too: the manifest is written there)."""
    done = install_example(tmp_path_factory, "pi-git-checkpoints")
    assert done.output.splitlines() == ["Installed pi-git-checkpoints 0.1.0 (provides: git-checkpoints)"]
    return done.venv, done.env
