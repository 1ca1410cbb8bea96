"""pi's ``extensions`` and ``packages`` settings in pi-host: Python files, package folders and
importable modules load like ``-e``; what only pi can load (npm, git, TypeScript, ``builtin:``)
is one warning line each and the run goes on; an untrusted project's settings load no code."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.pi import run_pi

MARKER_PLUGIN = """
import os
from pathlib import Path
from pi_host import hookimpl

Path(os.environ["MARKERS"], {name!r}).write_text("imported")


@hookimpl
def on_session_start(event, ctx):
    print("{name} saw session_start", flush=True)
"""


def write_settings(directory: Path, data: dict) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "settings.json"
    path.write_text(json.dumps(data))
    return path


def marker_plugin(path: Path, name: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(MARKER_PLUGIN.format(name=name))
    return path


# --- unit: how each entry is read ---------------------------------------------------------------


def test_a_settings_extension_loads_and_an_npm_package_warns_in_one_line(
    isolated_environment, tmp_path, monkeypatch
):
    env = isolated_environment
    monkeypatch.setenv("MARKERS", str(tmp_path))
    marker_plugin(env["agent"] / "ext.py", "ext")
    write_settings(env["agent"], {"extensions": ["./ext.py"], "packages": ["npm:foo"]})
    out = run_pi("--model", "faux/faux-1", "--no-session", "-p", "hello", cwd=env["work"])
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["ext saw session_start", "faux: hello"]
    [warning] = out.stderr.splitlines()
    assert warning.startswith("pi: settings: ") and "'npm:foo' is an npm package" in warning


def test_an_untrusted_projects_settings_load_no_code(isolated_environment, tmp_path, monkeypatch):
    env = isolated_environment
    monkeypatch.setenv("MARKERS", str(tmp_path))
    marker_plugin(env["work"] / ".pi" / "evil.py", "evil")
    write_settings(env["work"] / ".pi", {"extensions": ["./evil.py"], "packages": ["npm:x"]})
    out = run_pi(
        "--model", "faux/faux-1", "--no-session", "-p", "hello", cwd=env["work"]
    )  # print mode, defaultProjectTrust "ask": not trusted
    assert out.returncode == 0, out.stderr
    assert "evil" not in out.stdout and not (tmp_path / "evil").exists()
    assert "npm:x" not in out.stderr  # not even read
    trusted = run_pi("--model", "faux/faux-1", "--no-session", "-a", "-p", "hello", cwd=env["work"])
    assert "evil saw session_start" in trusted.stdout and (tmp_path / "evil").exists()
    assert "'npm:x' is an npm package" in trusted.stderr
