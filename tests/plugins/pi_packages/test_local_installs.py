"""A local folder installs by reference (pip's editable install) unless ``--copy``; what pip is
given for it, in process with pip replaced: the spec only ever as a package, isolation skipped
when the build requirements are at hand, ``--no-deps`` when the dependencies are. (The real
install, edit and ``/reload``: ``tests/e2e/venvs/test_editable_install.py``.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pi_packages import build_tools, commands, pip_runner
from pi_packages.pip_runner import PipResult

HATCH = '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'


def project(root: Path, extra: str = "") -> Path:
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text(HATCH + '[project]\nname = "pi-x"\nversion = "1"\n' + extra)
    return root


@pytest.fixture
def pip_calls(monkeypatch, isolated_environment):
    """pip replaced: each call's arguments and build-tools folder; it "installs" pi-x 1."""
    calls = []

    def run(args, verbose=False, build_tools=None):
        calls.append((args, build_tools))
        return PipResult(True, "", requested=[("pi-x", "1")])

    monkeypatch.setattr(commands, "run_pip", run)
    monkeypatch.setattr(commands, "pip_command", lambda: (["pip"], True))
    monkeypatch.setattr(commands, "installed", dict)
    # the backend's extra requirements, as hatchling answers for an editable build
    monkeypatch.setattr(build_tools, "_hook_requirements", lambda *a: [])
    return calls


def recorded(isolated_environment) -> list[dict]:
    return json.loads((isolated_environment["agent"] / "pi-host-packages.json").read_text())["packages"]


def test_a_folder_is_editable_and_a_copy_is_not(tmp_path, pip_calls, isolated_environment):
    folder = project(tmp_path / "pi-x")
    assert commands.cmd_install([str(folder)]) == 0
    [(args, tools)] = pip_calls
    assert args[-1] == f"--editable={folder}" and "--" not in args
    # hatchling is in this environment, and pi-x has no dependencies: neither isolation nor resolving
    assert "--no-build-isolation" in args and "--no-deps" in args and tools is None
    assert recorded(isolated_environment)[0]["editable"] is True

    pip_calls.clear()
    assert commands.cmd_install(["--copy", str(folder)]) == 0
    [(args, _)] = pip_calls
    assert args[-2:] == ["--", str(folder)] and not any(a.startswith("--editable") for a in args)
    assert recorded(isolated_environment)[0]["editable"] is False


def test_sync_and_update_keep_the_recorded_way(tmp_path, pip_calls, isolated_environment):
    folder = project(tmp_path / "pi-x")
    assert commands.cmd_install(["--copy", str(folder)]) == 0
    pip_calls.clear()
    assert commands.cmd_update([]) == 0
    [(args, _)] = pip_calls
    assert args[-2:] == ["--", str(folder)] and "-U" in args
    assert "--no-deps" not in args  # an update resolves the dependencies again

    assert commands.cmd_install([str(folder)]) == 0
    pip_calls.clear()
    assert commands.cmd_install(["--sync"]) == 0  # pi-x is "missing": installed() is empty
    [(args, _)] = pip_calls
    assert args[-1] == f"--editable={folder}"


def test_unmet_dependencies_or_a_users_isolation_choice_are_left_to_pip(tmp_path, pip_calls):
    needs = project(tmp_path / "needs", 'dependencies = ["no-such-distribution-pi-host-test"]\n')
    assert commands.cmd_install([str(needs)]) == 0
    assert "--no-deps" not in pip_calls[-1][0] and "--no-build-isolation" in pip_calls[-1][0]
    dynamic = project(tmp_path / "dynamic", 'dynamic = ["dependencies"]\n')
    assert commands.cmd_install([str(dynamic)]) == 0
    assert "--no-deps" not in pip_calls[-1][0]
    assert commands.cmd_install(["--no-build-isolation", str(dynamic)]) == 0
    assert pip_calls[-1][0].count("--no-build-isolation") == 1


def test_missing_build_requirements_go_to_a_cached_tools_folder(tmp_path, pip_calls, monkeypatch):
    folder = tmp_path / "flit-x"
    folder.mkdir()
    (folder / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["no-such-backend-pi-host-test>=1"]\nbuild-backend = "nsb"\n'
    )
    asked = []
    monkeypatch.setattr(
        build_tools, "_tools_folder", lambda reqs, extra: asked.append((reqs, extra)) or "/tools"
    )
    assert commands.cmd_install(["--index-url", "http://127.0.0.1:9/simple", str(folder)]) == 0
    assert asked == [(["no-such-backend-pi-host-test>=1"], ["--index-url", "http://127.0.0.1:9/simple"])]
    assert pip_calls[-1][1] == "/tools" and "--no-build-isolation" in pip_calls[-1][0]

    monkeypatch.setattr(build_tools, "_tools_folder", lambda reqs, extra: None)  # pip could not
    assert commands.cmd_install([str(folder)]) == 0
    assert pip_calls[-1][1] is None and "--no-build-isolation" not in pip_calls[-1][0]


def test_folders_that_are_not_projects_keep_pips_isolation(tmp_path, pip_calls):
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    (legacy / "setup.py").write_text("")
    assert commands.cmd_install([str(legacy)]) == 0
    assert pip_calls[-1][0][-1] == f"--editable={legacy}"
    assert "--no-build-isolation" not in pip_calls[-1][0]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert commands.cmd_install([str(empty)]) == 0
    assert pip_calls[-1][0][-2:] == ["--", str(empty)]  # pip says plainly that it is no project


def test_index_options_reach_the_tools_install_and_nothing_else():
    extra = ["--no-deps", "-i", "http://a/simple", "--find-links=/w", "--no-index", "--force-reinstall"]
    assert build_tools._index_options(extra) == ["-i", "http://a/simple", "--find-links=/w", "--no-index"]


def test_pip_starts_without_the_tools_folder_on_its_path(monkeypatch):
    seen = {}

    def fake_run(command, **kw):
        seen.update(command=command, env=kw["env"])

        class Done:
            returncode, stdout = 1, ""

        return Done()

    monkeypatch.setattr(pip_runner.subprocess, "run", fake_run)
    monkeypatch.setattr(pip_runner, "pip_command", lambda: (["python", "-m", "pip"], True))
    pip_runner.run_pip(["install", "--", "/x"], build_tools="/tools")
    assert seen["command"][1:3] == ["-c", build_tools.BOOT] and seen["command"][3] == "install"
    assert seen["env"]["PYTHONPATH"].split(":")[0] == "/tools"
    assert seen["env"]["PI_HOST_BUILD_TOOLS"] == "/tools"
