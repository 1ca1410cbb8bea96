"""pi-protected-paths: writes outside the project or to protected files are refused, untouched.

Each kind of target is tried with ``-e``; then the package is installed by the real
``pi install`` into a throw-away environment, whose ``pi`` refuses in print mode and in a real
terminal (tmux)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.examples import (
    install_example,
    installed_row,
    result_text,
    session_entries,
    tool_results,
)
from tests.support.loopback import ToolCall
from tests.support.venv import venv_pi

ATTEMPTS = [
    ToolCall("write", {"path": ".env", "content": "TOKEN=stolen\n"}),
    ToolCall("write", {"path": "../outside.txt", "content": "escaped\n"}),
    ToolCall("write", {"path": "allowed.txt", "content": "fine\n"}),
]


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
