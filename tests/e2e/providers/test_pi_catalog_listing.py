"""The recorded pi 1.6.0 listing the catalog test compares with is still what pi prints (one pi
run, skipped without pi), and pi-host's own ``pi --list-models`` prints the same rows."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.providers.pi_catalog import FAKE_ENV, RECORDED_LISTING, pi_listing


def _rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.strip()]


def test_recorded_listing_is_pi_1_6_0s(tmp_path):
    listing = pi_listing()
    if listing is None:
        pytest.skip("pi 1.6.0 is not installed under .tools/")
    assert _rows(listing) == _rows(RECORDED_LISTING.read_text(encoding="utf-8"))


def test_pi_host_cli_lists_the_same_rows(tmp_path):
    (tmp_path / "agent").mkdir(exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "PI_CODING_AGENT_DIR": str(tmp_path / "agent"),
        **FAKE_ENV,
    }
    done = subprocess.run(
        [sys.executable, "-m", "pi_host", "--list-models"],
        capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    ours = [row for row in _rows(done.stdout) if row[0] != "faux"]  # pi-host's scripted provider
    assert ours == _rows(RECORDED_LISTING.read_text(encoding="utf-8"))
