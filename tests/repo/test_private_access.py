"""No module of pi_host/ or plugins/ reaches into another object's private members (ruff's SLF001,
selected in pyproject.toml), except the files on the allow-list, which may only shrink: a file
that no longer needs its exception must leave the list."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.paths import REPO

ALLOWED = {
    "pi_host/protocol/abort.py",
    "plugins/pi_mcp/manager.py",
    "plugins/pi_session_jsonl/reading.py",
}
"""The exceptions as of the runtime layer's introduction; remove entries, never add them."""

RUFF = Path(sys.executable).with_name("ruff")


def _exceptions() -> set[str]:
    ignores = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["ruff"]["lint"]["per-file-ignores"]
    return {path for path, rules in ignores.items() if "SLF001" in rules and not path.endswith("/**")}


def test_the_allow_list_only_shrinks():
    assert _exceptions() <= ALLOWED


@pytest.mark.skipif(not RUFF.exists(), reason="ruff is not installed in this environment")
def test_no_private_access_outside_the_allow_list_and_every_exception_is_still_needed():
    out = subprocess.run(
        [
            str(RUFF),
            "check",
            "--select",
            "SLF001",
            "--isolated",
            "--output-format",
            "concise",
            "pi_host",
            "plugins",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    offenders = {line.split(":", 1)[0] for line in out.stdout.splitlines() if "SLF001" in line}
    assert offenders - _exceptions() == set(), out.stdout
    assert _exceptions() - offenders == set(), (
        "an exception is no longer needed: remove it from pyproject.toml"
    )
