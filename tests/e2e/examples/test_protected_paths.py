"""pi-protected-paths: writes outside the project or to protected files are refused, untouched.

Each kind of target is tried with ``-e``; then the package is installed by the real
``pi install`` into a throw-away environment, whose ``pi`` refuses in print mode and in a real
terminal (tmux)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.examples import (
    example_module,
    install_example,
)
from tests.support.pi import run_pi

GUARD = example_module("pi-protected-paths", "pi_protected_paths")


def run_tool(name: str, arguments: dict):
    script = [
        {"toolCalls": [{"name": name, "arguments": arguments}]},
        {"text": "tool said: {{lastToolResult}}"},
    ]
    out = run_pi("-p", "--no-session", "--model", "faux/faux-1", "-e", GUARD, "do it", script=script)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    return install_example(tmp_path_factory, "pi-protected-paths")


@pytest.fixture
def project():
    work = Path.cwd()
    (work / ".git").mkdir()
    (work / ".git" / "config").write_text("[core]\n")
    (work / ".env").write_text("TOKEN=secret\n")
    (work / "notes.txt").write_text("old text\n")
    return work


@pytest.mark.parametrize(
    ("name", "arguments", "reason"),
    [
        ("write", {"path": "../outside.txt", "content": "x"}, "outside the project directory"),
        ("write", {"path": ".env", "content": "TOKEN=stolen\n"}, "is a protected file (.env)"),
        ("write", {"path": "config/.env.local", "content": "x"}, "is a protected file (.env.*)"),
        ("write", {"path": ".git/hooks/pre-commit", "content": "x"}, "is inside .git/"),
        (
            "edit",
            {"path": ".git/config", "edits": [{"oldText": "[core]", "newText": "[evil]"}]},
            "inside .git/",
        ),
        ("edit", {"path": ".env", "edits": [{"oldText": "secret", "newText": "leaked"}]}, "protected file"),
        ("bash", {"command": "echo x > ../outside.txt"}, "outside the project directory"),
        ("bash", {"command": "echo TOKEN=x >> .env"}, "protected file"),
        ("bash", {"command": "echo x | tee -a .git/config"}, "inside .git/"),
    ],
)
def test_protected_targets_are_refused_and_untouched(project, name, arguments, reason):
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    stdout = run_tool(name, arguments)
    assert f"pi-protected-paths: refused {name}" in stdout and reason in stdout
    after = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    assert after == before
    assert not (project.parent / "outside.txt").exists()


def test_an_absolute_path_outside_is_refused(project, tmp_path):
    target = tmp_path / "elsewhere.txt"
    stdout = run_tool("write", {"path": str(target), "content": "x"})
    assert "outside the project directory" in stdout and not target.exists()


def test_a_symlink_out_of_the_project_is_refused(project, tmp_path):
    (tmp_path / "real").mkdir()
    (project / "link").symlink_to(tmp_path / "real")
    stdout = run_tool("write", {"path": "link/x.txt", "content": "x"})
    assert "outside the project directory" in stdout and not (tmp_path / "real" / "x.txt").exists()


def test_writes_inside_the_project_work(project):
    stdout = run_tool("write", {"path": "src/new.py", "content": "print(1)\n"})
    assert "pi-protected-paths" not in stdout
    assert (project / "src" / "new.py").read_text() == "print(1)\n"
    run_tool("edit", {"path": "notes.txt", "edits": [{"oldText": "old", "newText": "new"}]})
    assert (project / "notes.txt").read_text() == "new text\n"
    stdout = run_tool("bash", {"command": "echo hi > out.txt 2>/dev/null && cat out.txt"})
    assert "hi" in stdout and (project / "out.txt").read_text() == "hi\n"


# --- installed by `pi install` ---------------------------------------------------------------
