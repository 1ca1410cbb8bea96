"""``pi install`` / ``list`` / ``remove`` / ``update`` / ``install --sync``, driven through the real
``pi`` of throw-away virtual environments.

The environments come from ``tests.support.venv.make_venv`` (see there); ``venv_pi`` runs their
``pi``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.support.paths import REPO
from tests.support.venv import OFFLINE, make_venv, venv_pi

GUARD = REPO / "extension_examples" / "pi-guard"
DANGEROUS = json.dumps(  # harmless if it ever ran: pi-guard's deny list matches "mkfs"
    [{"toolCalls": [{"name": "bash", "arguments": {"command": "echo mkfs"}}]}, {"text": "done"}]
)


def site_listing(venv: Path) -> list[str]:
    return sorted(p.name for p in venv.glob("lib/python*/site-packages/*"))


def manifest(agent: Path) -> dict:
    return json.loads((agent / "pi-host-packages.json").read_text())


def guard_blocks(venv: Path) -> bool:
    out = venv_pi(venv, "--model", "faux/faux-1", "--mode", "json", "clean up", PI_FAUX_SCRIPT=DANGEROUS)
    assert out.returncode == 0, out.stderr
    results = [
        json.loads(line)
        for line in out.stdout.splitlines()
        if line.startswith("{") and '"tool_execution_end"' in line
    ]
    assert results, out.stdout
    text = json.dumps(results)
    return "pi-guard refused" in text


def test_install_list_run_remove_and_sync(tmp_path, isolated_environment):
    agent = isolated_environment["agent"]
    first = make_venv(tmp_path / "first")
    before = site_listing(first)

    # --copy: a snapshot, as pip installs from an index (by reference: test_editable_install.py)
    out = venv_pi(first, "install", "--copy", *OFFLINE, os.path.relpath(GUARD, Path.cwd()))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["Installed pi-guard 0.1.0 (provides: guard)"]
    assert "pi_guard" in site_listing(first)
    [entry] = manifest(agent)["packages"]
    assert (entry["spec"], entry["name"], entry["version"]) == (str(GUARD), "pi-guard", "0.1.0")
    assert entry["editable"] is False and entry["installedAt"].endswith("Z")

    listed = venv_pi(first, "list")
    assert listed.stdout.splitlines() == [
        "pi-guard 0.1.0  [user]",
        f"    from: {GUARD}",
        "    pi_host: guard = pi_guard",
    ]
    [row] = json.loads(venv_pi(first, "list", "--json").stdout)
    assert row["entryPoints"] == ["guard = pi_guard"] and row["installed"] and row["scope"] == "user"
    plugins = {r["name"]: r for r in json.loads(venv_pi(first, "plugins", "--json").stdout)}
    assert plugins["guard"]["source"] == "installed" and plugins["guard"]["origin"] == "pi-guard"
    assert plugins["packages"]["source"] == "builtin"
    assert guard_blocks(first)

    # a fresh environment (pi-host reinstalled): a one-line hint, then --sync restores the package
    second = make_venv(tmp_path / "second")
    run = venv_pi(second, "--model", "faux/faux-1", "-p", "hi")
    assert run.returncode == 0
    assert run.stderr.splitlines() == [
        "pi: 1 recorded plugin package is not installed in this environment (pi-guard): "
        "run 'pi install --sync'"
    ]
    assert "MISSING" in venv_pi(second, "list").stdout
    synced = venv_pi(second, "install", "--sync", *OFFLINE)
    assert synced.returncode == 0, synced.stderr
    assert synced.stdout.splitlines() == ["Installed pi-guard 0.1.0 (provides: guard)"]
    assert guard_blocks(second)
    quiet = venv_pi(second, "--model", "faux/faux-1", "-p", "hi")
    assert quiet.stderr == ""
    assert venv_pi(second, "install", "--sync").stdout == "Every recorded plugin package is installed\n"

    # update reinstalls from the recorded spec and keeps the entry
    updated = venv_pi(first, "update", *OFFLINE)
    assert updated.returncode == 0, updated.stderr
    assert "Installed pi-guard 0.1.0" in updated.stdout

    removed = venv_pi(first, "remove", "pi-guard")
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout == "Removed pi-guard 0.1.0\n"
    assert site_listing(first) == before
    assert manifest(agent)["packages"] == []
    assert venv_pi(first, "list").stdout == "No plugin packages installed\n"
    assert "guard" not in {r["name"] for r in json.loads(venv_pi(first, "plugins", "--json").stdout)}
    assert not guard_blocks(first)
    again = venv_pi(first, "uninstall", "pi-guard")
    assert again.returncode == 1 and again.stderr == "pi: pi-guard is not installed\n"


def test_failing_install_changes_nothing(tmp_path, isolated_environment):
    agent = isolated_environment["agent"]
    venv = make_venv(tmp_path / "venv")
    before = site_listing(venv)
    broken = tmp_path / "needs-missing"
    (broken / "needs_missing").mkdir(parents=True)
    (broken / "needs_missing" / "__init__.py").write_text("")
    (broken / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
        '[project]\nname = "needs-missing"\nversion = "1.0"\n'
        'dependencies = ["no-such-distribution-pi-host-test"]\n'
        '[project.entry-points.pi_host]\nneeds = "needs_missing"\n'
    )
    for spec, line in [
        (
            str(tmp_path / "nowhere"),
            f"pi: installing {tmp_path / 'nowhere'} failed: no such file or directory",
        ),
        (
            "no-such-distribution-pi-host-test",
            "pi: installing no-such-distribution-pi-host-test failed: "
            "No matching distribution found for no-such-distribution-pi-host-test",
        ),
        (
            str(broken),
            f"pi: installing {broken} failed: "
            "No matching distribution found for no-such-distribution-pi-host-test",
        ),
    ]:
        out = venv_pi(venv, "install", *OFFLINE, spec)
        assert out.returncode == 1
        assert out.stderr.splitlines() == [line]
        assert out.stdout == ""
    assert site_listing(venv) == before
    assert not (agent / "pi-host-packages.json").exists()


def test_project_scope_needs_trust(tmp_path, isolated_environment):
    venv = make_venv(tmp_path / "venv")
    project = isolated_environment["work"]
    (project / ".pi" / "extensions").mkdir(parents=True)  # something to protect: trust matters
    out = venv_pi(venv, "install", "-l", *OFFLINE, str(GUARD), cwd=project)
    assert out.returncode == 1
    assert out.stderr.startswith("pi: project packages need a trusted project (defaultProjectTrust=ask)")
    assert not (project / ".pi" / "pi-host-packages.json").exists()

    out = venv_pi(venv, "-a", "install", "-l", *OFFLINE, str(GUARD), cwd=project)
    assert out.returncode == 0, out.stderr
    [entry] = json.loads((project / ".pi" / "pi-host-packages.json").read_text())["packages"]
    assert entry["name"] == "pi-guard"
    assert not (isolated_environment["agent"] / "pi-host-packages.json").exists()
    listed = venv_pi(venv, "-a", "list", cwd=project)
    assert listed.stdout.splitlines()[0] == "pi-guard 0.1.0  [project]"
    removed = venv_pi(venv, "remove", "-l", "-a", "pi-guard", cwd=project)
    assert removed.returncode == 0, removed.stderr
    assert json.loads((project / ".pi" / "pi-host-packages.json").read_text())["packages"] == []
