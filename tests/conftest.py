"""Every test runs with a temporary agent dir, home, cache and working directory."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path, monkeypatch):
    home = tmp_path / "home"
    agent = tmp_path / "agent"
    work = tmp_path / "work"
    for directory in (home, agent, work):
        directory.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.setenv("PI_HOST_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.delenv("PI_HOST_NO_PLUGINS", raising=False)
    monkeypatch.delenv("PI_HOST_DISABLE_PLUGINS", raising=False)
    monkeypatch.delenv("PI_FAUX_SCRIPT", raising=False)
    for key in list(os.environ):
        if key.endswith("_API_KEY") or key in (
            "ANTHROPIC_OAUTH_TOKEN",
            "ANTHROPIC_AUTH_TOKEN",
            "GEMINI_API_KEY",
        ):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(work)
    try:
        import pi_provider_faux

        pi_provider_faux.clear()
    except ImportError:
        pass
    yield {"home": home, "agent": agent, "work": work}
