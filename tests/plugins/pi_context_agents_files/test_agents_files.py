"""AGENTS.md / CLAUDE.md discovery (reference §8.3, §11 item 56)."""

from __future__ import annotations

import os
import subprocess

import pytest
from pi_context_agents_files.discovery import discover, render


def test_global_first_then_root_down_to_cwd(isolated_environment, tmp_path):
    agent = isolated_environment["agent"]
    (agent / "AGENTS.md").write_text("global")
    top = tmp_path / "top"
    cwd = top / "mid" / "leaf"
    cwd.mkdir(parents=True)
    (top / "CLAUDE.md").write_text("top")
    (cwd / "AGENTS.md").write_text("leaf")
    files = discover(str(agent), str(cwd))
    assert [(f.path, f.content) for f in files] == [
        (str(agent / "AGENTS.md"), "global"),
        (str(top / "CLAUDE.md"), "top"),
        (str(cwd / "AGENTS.md"), "leaf"),
    ]


def test_one_file_per_directory_override_preferred(isolated_environment, tmp_path):
    for name in ("CLAUDE.md", "AGENTS.md", "AGENTS.override.md"):
        (tmp_path / name).write_text(name)
    files = discover(str(isolated_environment["agent"]), str(tmp_path))
    assert [os.path.basename(f.path) for f in files] == ["AGENTS.override.md"]


def test_agents_preferred_over_claude(isolated_environment, tmp_path):
    (tmp_path / "CLAUDE.md").write_text("c")
    (tmp_path / "AGENTS.md").write_text("a")
    assert [f.content for f in discover(str(isolated_environment["agent"]), str(tmp_path))] == ["a"]


def test_directories_named_like_context_files_are_ignored(isolated_environment, tmp_path):
    (tmp_path / "AGENTS.md").mkdir()
    (tmp_path / "CLAUDE.md").write_text("c")
    assert [f.content for f in discover(str(isolated_environment["agent"]), str(tmp_path))] == ["c"]


def test_bom_is_stripped(isolated_environment, tmp_path):
    (tmp_path / "AGENTS.md").write_bytes("\ufeffhello".encode())
    assert discover(str(isolated_environment["agent"]), str(tmp_path))[0].content == "hello"


def test_agent_dir_inside_the_tree_loads_once(isolated_environment):
    agent = isolated_environment["agent"]
    (agent / "AGENTS.md").write_text("g")
    files = discover(str(agent), str(agent))
    assert len(files) == 1


def test_render_wraps_each_file(tmp_path):
    (tmp_path / "AGENTS.md").write_text("Use tabs.\n")
    body = render(discover(str(tmp_path / "none"), str(tmp_path)))
    assert (
        f'<project_instructions path="{tmp_path / "AGENTS.md"}">\nUse tabs.\n</project_instructions>' in body
    )
    assert render([]) is None


@pytest.mark.skipif(
    subprocess.run(["git", "--version"], capture_output=True).returncode != 0, reason="git missing"
)
def test_nested_worktree_shadows_main_repository_file(isolated_environment, tmp_path):
    main = tmp_path / "main"
    main.mkdir()

    def git(*args, cwd=main):
        subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)

    git("init", "-q")
    (main / "AGENTS.md").write_text("main copy")
    git("add", "AGENTS.md")
    git("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "x")
    git("worktree", "add", "-q", str(main / ".worktrees" / "feat"))
    worktree = main / ".worktrees" / "feat"
    files = discover(str(isolated_environment["agent"]), str(worktree))
    assert [f.path for f in files] == [str(worktree / "AGENTS.md")]
    # the main checkout itself still sees its file
    assert [f.path for f in discover(str(isolated_environment["agent"]), str(main))] == [
        str(main / "AGENTS.md")
    ]
