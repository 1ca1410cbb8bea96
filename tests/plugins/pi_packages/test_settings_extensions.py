"""pi's ``extensions`` and ``packages`` settings in pi-host: Python files, package folders and
importable modules load like ``-e``, and so do TypeScript extensions (through ts-bridge); what only
pi can load (npm packages pi-host did not install, git, ``builtin:``)
is one warning line each and the run goes on; an untrusted project's settings load no code."""

from __future__ import annotations

import json
from pathlib import Path

from pi_packages.settings_plugins import plugins_named

from pi_host.plugins.selection import PluginRequest, load_plugins

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


def names_problems(path: Path) -> tuple[list[str], list[str]]:
    problems: list[str] = []
    return plugins_named(str(path), json.loads(path.read_text()), problems), problems


# --- unit: how each entry is read ---------------------------------------------------------------


def test_each_entry_is_a_plugin_or_one_line_naming_it(isolated_environment, tmp_path):
    agent = isolated_environment["agent"]
    (agent / "ext.py").write_text("")
    (agent / "pkg").mkdir()
    (agent / "pkg" / "__init__.py").write_text("")
    (agent / "tool.ts").write_text("export default () => {}")
    (agent / "ts-ext").mkdir()
    (agent / "ts-ext" / "index.ts").write_text("")
    (agent / "project").mkdir()
    (agent / "project" / "pyproject.toml").write_text("")
    path = write_settings(
        agent,
        {
            "extensions": [
                "./ext.py",
                "+pkg",
                "./tool.ts",
                "ts-ext",
                "./gone.py",
                "-./ext.py",
                "!*.ts",
                "builtin:mcp",
            ],
            "packages": [
                "npm:@scope/tools@1.0.0",
                "git:github.com/me/pi-tools@v1",
                "https://github.com/me/pi-tools",
                "leftpad-xyz",
                "json",
                "./project",
                {"source": "npm:filtered", "skills": []},
                {"skills": []},
            ],
        },
    )
    found, problems = names_problems(path)
    # pi's TypeScript extensions are plugins too: the ts-bridge plugin loads them
    assert found == [
        str(agent / "ext.py"),
        str(agent / "pkg"),
        str(agent / "tool.ts"),
        str(agent / "ts-ext"),
        "json",
    ]
    expected = [
        "'./gone.py' does not exist",
        "'builtin:mcp' is one of pi's built-in extensions",
        'no "source" string',
        "'npm:@scope/tools@1.0.0' is an npm package pi-host has not installed (pi install npm:@scope/tools@1.0.0)",
        "'git:github.com/me/pi-tools@v1' is a git source",
        "'https://github.com/me/pi-tools' is a git source",
        "'leftpad-xyz' is not an importable Python package",
        "'./project' is a Python project, not an installed package",
        "'npm:filtered' is an npm package",
    ]
    assert len(problems) == len(expected), problems
    for fragment in expected:
        [line] = [p for p in problems if fragment in p]
        assert line.startswith(f"{path}: ") and "\n" not in line


def test_installed_plugins_named_in_packages_are_not_loaded_again(isolated_environment):
    path = write_settings(
        isolated_environment["agent"],
        {"packages": ["pi-host", "pi_context_skills", {"source": "pi-host", "extensions": []}]},
    )
    found, problems = names_problems(path)
    assert found == []
    [line] = problems  # the filter that cannot apply is said once; the names are no problem
    assert "'pi-host' is a Python package" in line and "disabledPlugins" in line


def test_odd_values_never_raise(isolated_environment):
    path = write_settings(isolated_environment["agent"], {"extensions": "ext.py", "packages": {"a": 1}})
    assert names_problems(path) == ([], [])  # wrong types: the settings schema names them
    path = write_settings(
        isolated_environment["agent"], {"extensions": [None, 3, ""], "packages": [[], None, ""]}
    )
    found, problems = names_problems(path)
    assert found == [] and len(problems) == 2  # the two empty strings; the schema names the rest


# --- unit: plugin selection loads them in their scope -------------------------------------------


def test_user_and_trusted_project_settings_load_their_plugins(isolated_environment, tmp_path, monkeypatch):
    env = isolated_environment
    monkeypatch.setenv("MARKERS", str(tmp_path))
    marker_plugin(env["agent"] / "user_ext.py", "user_ext")
    write_settings(env["agent"], {"extensions": ["./user_ext.py"]})
    marker_plugin(env["work"] / ".pi" / "project_ext.py", "project_ext")
    write_settings(
        env["work"] / ".pi", {"extensions": ["./project_ext.py"], "packages": ["../.pi/project_ext.py"]}
    )

    untrusted = load_plugins(PluginRequest(cwd=str(env["work"]), approve=False))
    assert [r.source for r in untrusted.host.records if r.name == "user_ext"] == ["global"]
    assert not any(r.name.startswith("project_ext") for r in untrusted.host.records)
    assert not (tmp_path / "project_ext").exists()  # an untrusted project's settings import nothing

    trusted = load_plugins(PluginRequest(cwd=str(env["work"]), approve=True))
    [record] = [
        r for r in trusted.host.records if r.name.startswith("project_ext")
    ]  # named twice, loaded once
    assert (record.source, record.error) == ("project", None)
    assert (tmp_path / "project_ext").read_text() == "imported"
    assert trusted.problems == []


def test_disabled_plugins_and_no_extensions_apply_to_settings_plugins(
    isolated_environment, tmp_path, monkeypatch
):
    env = isolated_environment
    monkeypatch.setenv("MARKERS", str(tmp_path))
    marker_plugin(env["agent"] / "noisy.py", "noisy")
    write_settings(env["agent"], {"extensions": ["./noisy.py"], "disabledPlugins": ["noisy"]})
    loaded = load_plugins(PluginRequest(cwd=str(env["work"])))
    [record] = [r for r in loaded.host.records if r.name == "noisy"]
    assert record.disabled and loaded.problems == []  # the disabled name matched this plugin
    write_settings(env["agent"], {"extensions": ["./noisy.py"]})
    bare = load_plugins(PluginRequest(cwd=str(env["work"]), builtins_only=True))
    assert not any(r.name == "noisy" for r in bare.host.records)
    assert not (tmp_path / "noisy").exists()
