"""Files written by pi 1.6.0 (fixtures from ``fixtures/make_fixtures.py``) load, project, round-trip
and continue here; the CLI sends the same history pi sends."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.plugins.pi_session_jsonl.test_pi_fixtures import _comparable, _same_history
from tests.support.loopback_fixture_server import LoopbackServer, models_json
from tests.support.pi import PI_SCRIPT, run_pi
from tests.support.session_files import FIXTURES, read_jsonl


def copy_fixture(name: str, tmp_path: Path) -> Path:
    target = tmp_path / f"{name}.jsonl"
    shutil.copyfile(FIXTURES / f"{name}.jsonl", target)
    return target


@pytest.mark.parametrize("name", ["pi_basic", "pi_compacted"])
def test_pi_host_cli_continues_a_pi_file_with_the_same_history(name, tmp_path, isolated_environment):
    """``pi --session <file written by pi 1.6.0> -p ...`` sends the history pi itself sends."""
    path = copy_fixture(name, tmp_path)
    before = read_jsonl(path)
    expected = json.loads((FIXTURES / f"{name}.continue_request.json").read_text())
    project = "/tmp/pi-host-fixture-project"
    os.makedirs(project, exist_ok=True)
    agent = isolated_environment["agent"]
    with LoopbackServer() as server:
        (agent / "models.json").write_text(json.dumps(models_json(server.base_url)))
        result = run_pi("--session", str(path), "-p", "Continue please", cwd=project, command=PI_SCRIPT)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("Answer 1: Continue please")
        assert len(server.requests) == 1
        _same_history(_comparable(server.requests[0]["messages"]), _comparable(expected))
    after = read_jsonl(path)
    assert after[: len(before)] == before
    new = after[len(before) :]
    assert new[0]["parentId"] == before[-1]["id"]
    assert [e["message"]["role"] for e in new if e["type"] == "message"][-2:] == ["user", "assistant"]
