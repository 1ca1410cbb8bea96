"""The footer and the git branch read from ``.git/HEAD``."""

from __future__ import annotations

import pytest
from pi_render_builtin.footer import render_footer

from pi_host.lib.render import FooterInfo, RenderContext, default_theme, git_branch, strip_ansi, visible_width


def info(**kw) -> FooterInfo:
    values = dict(
        cwd="/work/proj",
        git_branch="main",
        session_name="refactor",
        provider="anthropic",
        model="claude-sonnet",
        thinking_level="high",
        reasoning=True,
        input_tokens=12_300,
        output_tokens=4_560,
        cache_read=150_000,
        cache_write=2_000,
        cost=0.4567,
        context_tokens=50_000,
        context_window=200_000,
        statuses={"b-lint": "lint ok", "a-ci": "ci running"},
    )
    values.update(kw)
    return FooterInfo(**values)


def render(width: int = 120, **kw) -> list[str]:
    return render_footer(info(**kw), RenderContext(width=width, theme=default_theme("256"))).split("\n")


def test_footer_contents():
    lines = [strip_ansi(line) for line in render()]
    assert lines[0] == "/work/proj (main) • refactor"
    assert lines[1].startswith("↑12k ↓4.6k R150k W2.0k $0.457  25.0%/200k")
    assert lines[1].endswith("anthropic/claude-sonnet • high")
    assert len(lines[1]) == 120  # the model is right-aligned
    assert lines[2] == "ci running lint ok"


def test_footer_home_and_no_reasoning(isolated_environment):
    home = isolated_environment["home"]
    lines = [
        strip_ansi(line)
        for line in render(
            cwd=str(home / "code"), git_branch=None, session_name=None, reasoning=False, statuses={}
        )
    ]
    assert lines[0] == "~/code"
    assert lines[1].endswith("anthropic/claude-sonnet")
    assert len(lines) == 2


def test_footer_context_colour_warns_when_full():
    line = render(context_tokens=190_000)[1]
    assert "95.0%/200k" in strip_ansi(line)
    assert "\x1b[38;5;167m95.0%" in line  # the error colour


@pytest.mark.parametrize("width", range(20, 121, 5))
def test_footer_fits(width):
    for line in render(width, cwd="/very/long/" + "dir/" * 40):
        assert visible_width(line) <= width
    assert strip_ansi(render(width)[1])  # something of line 2 is always shown


def test_git_branch_from_head(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/feature/x\n")
    nested = repo / "src" / "pkg"
    nested.mkdir(parents=True)
    assert git_branch(str(nested)) == "feature/x"
    (repo / ".git" / "HEAD").write_text("0123456789abcdef0123456789abcdef01234567\n")
    assert git_branch(str(repo)) == "0123456"


def test_git_branch_of_a_worktree(tmp_path):
    main = tmp_path / "main" / ".git" / "worktrees" / "wt"
    main.mkdir(parents=True)
    (main / "HEAD").write_text("ref: refs/heads/topic\n")
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text("gitdir: ../main/.git/worktrees/wt\n")
    assert git_branch(str(worktree)) == "topic"


def test_no_repository(tmp_path):
    assert git_branch(str(tmp_path)) is None
