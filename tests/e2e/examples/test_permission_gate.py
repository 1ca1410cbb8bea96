"""pi-permission-gate: dangerous commands are denied without a UI and asked about with one.

The rules are checked directly and with ``-e``; then the package is installed by the real
``pi install`` into a throw-away environment, whose ``pi`` denies in print mode, asks an RPC
client, and asks in a real terminal (tmux) where a key answers the dialog."""

from __future__ import annotations

import pytest

from tests.support.examples import (
    example_module,
    install_example,
)
from tests.support.pi import run_pi

GATE = example_module("pi-permission-gate", "pi_permission_gate")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    return install_example(tmp_path_factory, "pi-permission-gate")


def test_print_mode_lets_ordinary_commands_run():
    script = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "echo gate-open"}}]},
        {"text": "result: {{lastToolResult}}"},
    ]
    out = run_pi("-p", "--no-session", "--model", "faux/faux-1", "-e", GATE, "say", script=script)
    assert out.returncode == 0, out.stderr
    assert "gate-open" in out.stdout and "pi-permission-gate" not in out.stdout
