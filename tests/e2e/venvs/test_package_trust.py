"""A project's package list (``.pi/pi-host-packages.json``) is a protected project resource, and no
spec, wherever it comes from, ever reaches pip as an option.

The "evil" package's ``setup.py`` writes a marker file the moment pip prepares it: the marker
existing means code from the repository ran. Each test ends with a positive control (the same
package installed once the user trusts it) so that a marker never written is not a vacuous pass.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.venv import OFFLINE, make_venv, venv_pi


def evil_package(where: Path, marker: Path) -> Path:
    """A setup.py-only project that leaves ``marker`` behind when pip so much as builds it."""
    where.mkdir(parents=True)
    (where / "evil_plugin").mkdir()
    (where / "evil_plugin" / "__init__.py").write_text("")
    (where / "setup.py").write_text(
        "from pathlib import Path\n"
        f"Path({str(marker)!r}).write_text('setup.py ran')\n"
        "from setuptools import setup\n"
        "setup(name='evil-plugin', version='1.0', packages=['evil_plugin'],\n"
        "      entry_points={'pi_host': ['evil = evil_plugin']})\n"
    )
    return where


def write_manifest(path: Path, *entries: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"packages": list(entries)}))


def pi(venv: Path, *args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess:
    return venv_pi(venv, *args, cwd=cwd, **env)


def test_untrusted_project_manifest_is_never_installed_nor_suggested(tmp_path, isolated_environment):
    venv = make_venv(tmp_path / "venv")
    marker = tmp_path / "MARKER"
    evil = evil_package(tmp_path / "evil", marker)
    repo = tmp_path / "cloned-repo"  # a repository holding nothing but the package list
    write_manifest(repo / ".pi" / "pi-host-packages.json", {"spec": str(evil), "name": "evil-plugin"})

    run = pi(venv, "--model", "faux/faux-1", "-p", "hi", cwd=repo)
    assert run.returncode == 0, run.stderr
    assert "install --sync" not in run.stderr
    assert "evil-plugin" not in run.stderr
    assert ".pi/pi-host-packages.json" in run.stderr  # pi's "Project not trusted ...; skipped" line

    synced = pi(venv, "install", "--sync", *OFFLINE, cwd=repo)
    assert synced.returncode == 1
    assert synced.stderr.count("\n") == 1, synced.stderr
    assert "not trusted" in synced.stderr and "--approve" in synced.stderr
    assert not marker.exists()

    for command in (["update", *OFFLINE], ["list"]):
        out = pi(venv, *command, cwd=repo)
        assert "evil-plugin" not in out.stdout, command
        assert not marker.exists(), command

    # the user trusts the project: now the hint names it and --sync installs it (the control)
    hinted = pi(venv, "-a", "--model", "faux/faux-1", "-p", "hi", cwd=repo)
    assert "(evil-plugin): run 'pi install --sync'" in hinted.stderr
    pi(venv, "install", "--sync", "-a", *OFFLINE, cwd=repo)
    assert marker.exists()  # (whether the build then succeeds depends on setuptools' wheel)


def test_option_like_specs_are_refused_from_every_source(tmp_path, isolated_environment):
    venv = make_venv(tmp_path / "venv")
    marker = tmp_path / "MARKER"
    evil = evil_package(tmp_path / "evil", marker)
    project = isolated_environment["work"]

    # the command line: after "--" everything is a spec, and a spec is never an option
    for spec in (f"-e{evil}", "--index-url=http://127.0.0.1:9/simple"):
        out = pi(venv, "install", *OFFLINE, "--", spec, str(evil))
        assert out.returncode == 1
        assert out.stderr.splitlines() == [
            f"pi: refusing {spec!r}: a package spec cannot begin with '-' "
            "(pip would read it as an option); write a path as ./-name"
        ]
        assert out.stdout == ""
        assert not marker.exists()

    # the user's list
    user_list = isolated_environment["agent"] / "pi-host-packages.json"
    write_manifest(user_list, {"spec": f"-e{evil}", "name": "evil-plugin"})
    out = pi(venv, "install", "--sync", *OFFLINE)
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        f"pi: {user_list}: refusing evil-plugin's spec {'-e' + str(evil)!r}: a package spec cannot "
        "begin with '-' (pip would read it as an option); write a path as ./-name"
    ]
    assert not marker.exists()
    out = pi(venv, "update", *OFFLINE)
    assert out.returncode == 1 and "refusing evil-plugin's spec" in out.stderr
    assert not marker.exists()
    user_list.unlink()

    # a trusted project's list
    project_list = project / ".pi" / "pi-host-packages.json"
    write_manifest(project_list, {"spec": f"--editable={evil}", "name": "evil-plugin"})
    out = pi(venv, "-a", "install", "--sync", *OFFLINE, cwd=project)
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        f"pi: {project_list}: refusing evil-plugin's spec {'--editable=' + str(evil)!r}: a package "
        "spec cannot begin with '-' (pip would read it as an option); write a path as ./-name"
    ]
    assert not marker.exists()

    # the control: the same package, named as a plain path, does run its setup.py
    write_manifest(project_list, {"spec": str(evil), "name": "evil-plugin", "editable": True})
    pi(venv, "-a", "install", "--sync", *OFFLINE, cwd=project)
    assert marker.exists()
