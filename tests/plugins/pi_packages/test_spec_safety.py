"""A spec is never handed to pip as an option, wherever it comes from, and a project's package list
is a protected project resource (in process: every refusal here happens before pip would start,
so a regression that ran pip would also trip the guard against starting Python outside e2e)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pi_packages.commands import cmd_install, cmd_update

from pi_host.config.trust import decide_trust, protected_resources

OPTION_SPECS = ["-e/tmp/evil", "--editable=/tmp/evil", "--index-url=http://127.0.0.1:9/simple", " -r x"]
OPTION_LINE = "a package spec cannot begin with '-' (pip would read it as an option); write a path as ./-name"


@pytest.fixture(autouse=True)
def pip_cannot_reach_this_environment(tmp_path, monkeypatch):
    """Should a regression hand a spec to pip after all, it installs nothing here, offline."""
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_TARGET", str(tmp_path / "pip-target"))


def write_manifest(path: Path, *entries: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"packages": list(entries)}))
    return path


def test_the_project_package_list_is_a_protected_resource(isolated_environment):
    project = isolated_environment["work"]
    write_manifest(project / ".pi" / "pi-host-packages.json", {"spec": "/x", "name": "x"})
    assert protected_resources(str(project)) == [".pi/pi-host-packages.json"]
    decision = decide_trust(str(project))
    assert not decision.trusted and decision.skipped == [".pi/pi-host-packages.json"]
    assert decide_trust(str(project), True).trusted


@pytest.mark.parametrize("spec", OPTION_SPECS)
def test_command_line_specs_that_look_like_options_are_refused(spec, capsys, isolated_environment):
    assert cmd_install(["--no-index", "--", spec, "/nowhere/pi-guard"]) == 1
    captured = capsys.readouterr()
    assert captured.err == f"pi: refusing {spec!r}: {OPTION_LINE}\n" and captured.out == ""
    assert not (isolated_environment["agent"] / "pi-host-packages.json").exists()


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        (None, "a package spec must be a non-empty string"),
        (5, "a package spec must be a non-empty string"),
        ("  ", "a package spec must be a non-empty string"),
        ("pi-guard\n--index-url=http://x", "a package spec cannot hold control characters"),
        *[(spec, OPTION_LINE) for spec in OPTION_SPECS],
    ],
)
def test_recorded_specs_are_checked_before_pip(spec, problem, capsys, isolated_environment):
    entry = {"name": "evil-plugin"} | ({} if spec is None else {"spec": spec})
    path = write_manifest(isolated_environment["agent"] / "pi-host-packages.json", entry)
    for command in (cmd_install, cmd_update):
        assert command(["--sync"] if command is cmd_install else []) == 1
        [line] = capsys.readouterr().err.splitlines()
        assert line.startswith(f"pi: {path}: refusing evil-plugin's spec {spec!r}: {problem}"), line


def test_the_trusted_projects_list_is_checked_too(capsys, isolated_environment):
    project = isolated_environment["work"]
    path = write_manifest(project / ".pi" / "pi-host-packages.json", {"spec": "-e.", "name": "evil"})
    assert cmd_install(["--sync", "-a"]) == 1
    assert capsys.readouterr().err == f"pi: {path}: refusing evil's spec '-e.': {OPTION_LINE}\n"


def test_an_untrusted_projects_list_is_not_synced(capsys, isolated_environment):
    project = isolated_environment["work"]
    path = write_manifest(project / ".pi" / "pi-host-packages.json", {"spec": "-e.", "name": "evil"})
    assert cmd_install(["--sync"]) == 1
    captured = capsys.readouterr()
    assert captured.err == (
        f"pi: skipping {path}: the project is not trusted (defaultProjectTrust=ask); "
        "trust it (/trust, or -a/--approve) to use its packages\n"
    )
    assert captured.out == ""  # not "Every recorded plugin package is installed"


def test_dash_e_is_not_pips_editable(capsys):
    assert cmd_install(["-e", "./x"]) == 1
    assert capsys.readouterr().err == (
        "pi: -e is pi's --extension, not pip's; use --editable for an editable install\n"
    )


def test_specs_reach_pip_only_as_packages():
    from pi_packages.specs import pip_install_args, spec_problem

    assert pip_install_args("/p/x", False) == ["--", "/p/x"]
    assert pip_install_args("/p/x", True) == ["--editable=/p/x"]
    for spec in ("pi-guard", "pi-guard>=1,<2", "/abs/path", "git+https://h/o/r@v1", "x @ file:///p"):
        assert spec_problem(spec) is None, spec
