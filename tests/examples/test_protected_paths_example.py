# ruff: noqa: F811  (the `world` fixture is imported from tests.interactive.test_e2e)
"""pi-protected-paths: writes outside the project or to protected files are refused, untouched.

Each kind of target is tried with ``-e``; then the package is installed by the real
``pi install`` into a throw-away environment, whose ``pi`` refuses in print mode and in a real
terminal (tmux)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.example_install import venv_pi
from tests.examples.example_run import (
    example_module,
    install_example,
    installed_row,
    installed_terminal,
    pi,
    result_text,
    session_entries,
    tool_results,
)
from tests.interactive.loopback import LoopbackServer, Reply, ToolCall
from tests.interactive.terminal import tmux_available
from tests.interactive.test_e2e import world  # noqa: F401 (a fixture)

GUARD = example_module("pi-protected-paths", "pi_protected_paths")


def run_tool(name: str, arguments: dict):
    script = [
        {"toolCalls": [{"name": name, "arguments": arguments}]},
        {"text": "tool said: {{lastToolResult}}"},
    ]
    out = pi("-p", "--no-session", "--model", "faux/faux-1", "-e", GUARD, "do it", script=script)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    return install_example(tmp_path_factory, "pi-protected-paths")


def snapshot(root: Path) -> dict[Path, bytes]:
    """Every file under ``root``, with its bytes."""
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


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

ATTEMPTS = [
    ToolCall("write", {"path": ".env", "content": "TOKEN=stolen\n"}),
    ToolCall("write", {"path": "../outside.txt", "content": "escaped\n"}),
    ToolCall("write", {"path": "allowed.txt", "content": "fine\n"}),
]


def test_installed_by_pi_install_it_refuses_in_print_mode(installed, project, isolated_environment):
    row = installed_row(installed, "protected-paths")
    assert row["hooks"] == ["on_tool_call"]
    before = snapshot(project)
    calls = [{"name": c.name, "arguments": c.arguments} for c in ATTEMPTS]
    script = json.dumps([{"toolCalls": calls}, {"text": "tool said: {{lastToolResult}}"}])
    out = venv_pi(installed.venv, "-p", "--model", "faux/faux-1", "do it", cwd=project, PI_FAUX_SCRIPT=script)
    assert out.returncode == 0, out.stderr
    assert (project / "allowed.txt").read_text() == "fine\n"  # the project itself is writable
    assert (project / ".env").read_text() == "TOKEN=secret\n"
    assert not (project.parent / "outside.txt").exists()
    after = snapshot(project)
    assert {p: b for p, b in after.items() if p.name != "allowed.txt"} == before
    results = tool_results(session_entries(isolated_environment["agent"]))
    env_result, outside_result, allowed_result = results
    assert result_text(env_result) == "pi-protected-paths: refused write: .env is a protected file (.env)"
    assert result_text(outside_result).startswith(
        "pi-protected-paths: refused write: ../outside.txt is outside the project directory"
    )
    assert "pi-protected-paths" not in result_text(allowed_result)


@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_interactive_refusals_are_shown_and_the_files_untouched(installed, project, world):
    before = snapshot(project)
    with LoopbackServer([Reply("", tool_calls=ATTEMPTS[:2]), Reply("could not write them")]) as server:
        with installed_terminal(installed, world, server, width=120) as term:
            term.send("store the token")
            term.press("Enter")
            term.wait_for("could not write them")
            term.wait_gone("esc to interrupt")
            screen = term.screen()
            assert "pi-protected-paths: refused write: .env is a protected file (.env)" in screen
            refusal = f"pi-protected-paths: refused write: ../outside.txt is outside the project directory {project}"
            assert refusal.replace(" ", "") in re.sub(r"\s+", "", screen)  # the long path wraps
            term.press("C-d")
            assert term.wait_exit() == 0
        told = json.dumps([m for m in server.requests[1]["messages"] if m["role"] == "tool"])
        assert "is a protected file" in told and "is outside the project directory" in told
    assert not (project.parent / "outside.txt").exists()
    after = snapshot(project)
    assert after == before
