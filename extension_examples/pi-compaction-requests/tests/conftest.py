"""Run against the working copy and keep pi-host's files in a temporary directory."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    for name in ("home", "agent", "cache", "work"):
        (tmp_path / name).mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("PI_HOST_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path / "work")
