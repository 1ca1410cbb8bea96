"""Packages carry resources: skills, prompt templates and themes a plugin declares with
``register_resources`` (or a pi-package folder the ``packages`` setting names) are found like the
agent dir's, after the settings' paths, narrowed by pi's filter objects; and, at the user's
boundary, an installed ``extension_examples/pi-resource-pack`` shows in ``pi list`` /
``pi plugins``, the system prompt, ``/`` commands and the theme lookup."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pi_host import hookimpl
from pi_host.lib import resources
from pi_host.lib.render.themes import available_themes, load_theme
from pi_host.plugins.dispatch import PluginHost, PluginRecord
from pi_host.plugins.registrations import Resources
from tests.context.ctx_helpers import make_session
from tests.example_install import make_venv, pi_install_example, venv_pi

THEME = {"name": "dusk", "appearance": "dark", "colors": {"accent": "#c792ea"}}


def skill(directory: Path, name: str, description: str = "does things") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\nbody of {name}\n")
    return path


def make_pack(root: Path) -> Path:
    """A package folder with the conventional skills/, prompts/ and themes/ folders."""
    skill(root / "skills" / "alpha", "alpha", "the package's alpha")
    skill(root / "skills" / "beta", "beta")
    (root / "prompts").mkdir(parents=True)
    (root / "prompts" / "review.md").write_text("---\ndescription: Review\n---\nReview $1 now\n")
    (root / "prompts" / "summary.md").write_text("Summarise $@\n")
    (root / "themes").mkdir()
    (root / "themes" / "dusk.json").write_text(json.dumps(THEME))
    (root / "themes" / "dawn.json").write_text(json.dumps({**THEME, "name": "dawn", "appearance": "light"}))
    return root


class Pack:
    """A plugin shipping the folders of ``root`` (``kinds``: explicit lists instead)."""

    def __init__(self, root: Path, **kinds: list[str]) -> None:
        self.root, self.kinds = root, kinds

    @hookimpl
    def register_resources(self):
        return [Resources(root=str(self.root), **self.kinds)]


def host_with(plugin, name="pack", origin="pi-pack", source="installed") -> PluginHost:
    host = PluginHost()
    assert host.register(plugin, PluginRecord(name=name, source=source, origin=origin))
    return host


def shipped(kind: str, host, env, cwd=None, trusted=True) -> list[str]:
    cwd = str(cwd or env["work"])
    return [r.path for r in resources.package_resources(kind, host, str(env["agent"]), cwd, trusted)]


def names(paths: list[str]) -> list[str]:
    return sorted(Path(p).parent.name if p.endswith("SKILL.md") else Path(p).name for p in paths)


def write_settings(directory: Path, data: dict) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "settings.json").write_text(json.dumps(data))


# --- unit: what a package ships and how filters narrow it ---------------------------------------


def test_conventional_folders_ship_whole_and_explicit_lists_replace_them(isolated_environment, tmp_path):
    root = make_pack(tmp_path / "pack")
    host = host_with(Pack(root))
    assert shipped("skills", host, isolated_environment) == [str(root / "skills")]
    assert shipped("themes", host, isolated_environment) == [str(root / "themes")]
    only = host_with(Pack(root, skills=["skills/beta"], prompts=[]))
    assert shipped("skills", only, isolated_environment) == [str(root / "skills" / "beta")]
    assert shipped("prompts", only, isolated_environment) == []
    assert shipped("themes", only, isolated_environment) == [str(root / "themes")]  # None: conventional


def test_filter_objects_narrow_a_python_package_as_pi_does(isolated_environment, tmp_path):
    root = make_pack(tmp_path / "pack")
    write_settings(
        isolated_environment["agent"],
        {
            "packages": [
                {
                    "source": "pi-pack",
                    "skills": ["!beta"],
                    "prompts": [],
                    "themes": ["themes/*.json", "-themes/dawn.json"],
                }
            ]
        },
    )
    host = host_with(Pack(root))
    assert names(shipped("skills", host, isolated_environment)) == ["alpha"]
    assert shipped("prompts", host, isolated_environment) == []  # [] ships none of the kind
    assert names(shipped("themes", host, isolated_environment)) == ["dusk.json"]


def test_filters_match_by_distribution_plugin_or_module_name(isolated_environment, tmp_path):
    root = make_pack(tmp_path / "pack")
    for source in ("pi-pack", "PI_PACK", "pack"):
        write_settings(isolated_environment["agent"], {"packages": [{"source": source, "skills": []}]})
        assert shipped("skills", host_with(Pack(root)), isolated_environment) == [], source
    write_settings(isolated_environment["agent"], {"packages": [{"source": "other-package", "skills": []}]})
    assert shipped("skills", host_with(Pack(root)), isolated_environment) == [str(root / "skills")]


def test_a_project_entry_replaces_the_users_and_autoload_false_edits_it(isolated_environment, tmp_path):
    root = make_pack(tmp_path / "pack")
    project = isolated_environment["work"] / ".pi"
    write_settings(isolated_environment["agent"], {"packages": [{"source": "pi-pack", "skills": ["alpha"]}]})
    host = host_with(Pack(root))
    assert names(shipped("skills", host, isolated_environment)) == ["alpha"]
    write_settings(project, {"packages": [{"source": "pi-pack", "skills": ["beta"]}]})
    assert names(shipped("skills", host, isolated_environment)) == ["beta"]
    assert names(shipped("skills", host, isolated_environment, trusted=False)) == [
        "alpha"
    ]  # untrusted: unread
    write_settings(
        project, {"packages": [{"source": "pi-pack", "autoload": False, "skills": ["+skills/beta"]}]}
    )
    assert names(shipped("skills", host, isolated_environment)) == ["alpha", "beta"]


@pytest.mark.parametrize(
    ("patterns", "expected"),
    [
        ([], ["a.md", "b.md", "c.md"]),  # apply_patterns itself: no includes means all
        (["a.md", "b*"], ["a.md", "b.md"]),
        (["!b.md"], ["a.md", "c.md"]),
        (["!*.md", "+prompts/b.md"], ["b.md"]),
        (["*", "-prompts/c.md", "-./prompts/a.md"], ["b.md"]),
        (["+b.md"], ["a.md", "b.md", "c.md"]),  # + is exact: a bare name is no exact path
    ],
)
def test_apply_patterns_follows_pis_rules(tmp_path, patterns, expected):
    files = [str(tmp_path / "prompts" / n) for n in ("a.md", "b.md", "c.md")]
    assert sorted(Path(p).name for p in resources.apply_patterns(files, patterns, str(tmp_path))) == expected


def test_skill_patterns_match_the_skill_folder(tmp_path):
    files = [str(skill(tmp_path / "skills" / n, n)) for n in ("one", "two")]
    assert names(resources.apply_patterns(files, ["two"], str(tmp_path))) == ["two"]
    assert names(resources.apply_patterns(files, ["-skills/one"], str(tmp_path))) == ["two"]


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"skills": []}, 'no "source" string'),
        ({"source": "x", "skills": "all"}, "must be a list of patterns"),
        ({"source": "x", "prompts": [1]}, "must be a list of patterns"),
        ("", "an empty source"),
        (42, None),  # the settings schema names values of the wrong type
    ],
)
def test_odd_package_entries_are_one_problem_or_left_to_the_schema(value, problem):
    entry, found = resources.package_entry(value, "/base", "user")
    assert entry is None
    assert (found is None) if problem is None else (problem in found)


def test_a_pi_package_folder_named_in_settings_gives_its_resources(isolated_environment, tmp_path):
    folder = make_pack(tmp_path / "pi-pkg")
    (folder / "package.json").write_text(
        json.dumps({"name": "pi-pkg", "pi": {"prompts": ["prompts/review.md"]}})
    )
    write_settings(isolated_environment["agent"], {"packages": [str(folder)]})
    assert shipped("skills", None, isolated_environment) == [str(folder / "skills")]
    assert shipped("prompts", None, isolated_environment) == [
        str(folder / "prompts" / "review.md")
    ]  # manifest
    (folder / "__init__.py").write_text("")  # a Python package folder is code, not a pi package
    assert shipped("skills", None, isolated_environment) == []


# --- unit: discovery puts package resources in pi's slot ---------------------------------------


async def test_package_skills_and_templates_come_after_settings_and_lose_collisions(
    isolated_environment, tmp_path
):
    env = isolated_environment
    root = make_pack(tmp_path / "pack")
    skill(env["agent"] / "skills" / "alpha", "alpha", "the user's alpha")
    (env["agent"] / "prompts").mkdir()
    (env["agent"] / "prompts" / "review.md").write_text("the user's review\n")
    session = await make_session(
        env["work"], plugins=[Pack(root)], flags={"skill": [str(skill(tmp_path / "cli" / "gamma", "gamma"))]}
    )
    commands = {}
    for source in session.context_sources:
        if source.commands is not None:
            commands.update({c["name"]: c for c in await source.commands(session.ctx)})
    assert commands["skill:alpha"]["description"] == "the user's alpha"  # the agent dir wins
    assert commands["skill:beta"]["sourceInfo"]["origin"] == "package"
    assert commands["skill:beta"]["sourceInfo"]["path"] == str(root / "skills" / "beta" / "SKILL.md")
    assert commands["summary"]["sourceInfo"]["origin"] == "package"
    assert commands["review"]["sourceInfo"]["path"] == str(env["agent"] / "prompts" / "review.md")
    skill_names = [n for n in commands if n.startswith("skill:")]
    assert skill_names.index("skill:beta") < skill_names.index("skill:gamma")  # packages before --skill
    sections = await session.build_sections()
    assert "<name>beta</name>" in sections["skills"] and "the package's alpha" not in sections["skills"]
    assert await session_expand(session, "/summary the diff") == "Summarise the diff\n"


async def session_expand(session, text):
    for source in session.context_sources:
        if source.expand_input is not None:
            result = source.expand_input(text, session.ctx)
            result = await result if hasattr(result, "__await__") else result
            if result is not None:
                return result
    return None


def test_package_themes_are_found_last_and_listed(isolated_environment, tmp_path):
    env = isolated_environment
    root = make_pack(tmp_path / "pack")
    packages = shipped("themes", host_with(Pack(root)), env)
    args = {"agent_dir": str(env["agent"]), "cwd": str(env["work"]), "project_trusted": True}
    theme, problems = load_theme("dusk", **args, packages=packages)
    assert (theme.name, problems) == ("dusk", [])
    assert {"dusk", "dawn"} <= set(available_themes(**args, packages=packages))
    missing, problems = load_theme("dusk", **args, packages=[])
    assert missing.name != "dusk" and "not found" in problems[0]
    (env["agent"] / "themes").mkdir()
    (env["agent"] / "themes" / "mine.json").write_text(json.dumps({**THEME, "colors": {"accent": "#010203"}}))
    mine, _ = load_theme("dusk", **args, packages=packages)
    assert mine.accent != theme.accent  # the user's own theme of that name wins over the package's


# --- the user's boundary: pi install, then pi list / plugins / a run -----------------------------


@pytest.fixture(scope="module")
def pack_venv(tmp_path_factory):
    where = tmp_path_factory.mktemp("resource-pack")
    venv = make_venv(where / "venv")
    pi_install_example("pi-resource-pack", venv, PI_CODING_AGENT_DIR=str(where / "agent"), HOME=str(where))
    return venv


def test_pi_list_and_pi_plugins_name_what_the_pack_ships(pack_venv, isolated_environment):
    listed = venv_pi(pack_venv, "list")
    assert listed.returncode == 0, listed.stderr
    text = listed.stdout
    assert "pi-resource-pack 0.1.0" in text
    assert "    skills: pack-release-notes" in text.splitlines()
    assert "    prompts: /pack-review" in text.splitlines()
    assert "    themes: pack-dusk" in text.splitlines()
    [row] = [
        r for r in json.loads(venv_pi(pack_venv, "list", "--json").stdout) if r["name"] == "pi-resource-pack"
    ]
    assert row["resources"] == {
        "skills": ["pack-release-notes"],
        "prompts": ["/pack-review"],
        "themes": ["pack-dusk"],
    }
    plugins = venv_pi(pack_venv, "plugins").stdout
    assert "resource-pack 0.1.0  [installed] ok" in plugins and "hooks: register_resources" in plugins


def json_run(venv, *args, **env):
    out = venv_pi(venv, "--model", "faux/faux-1", "--no-session", "--mode", "json", *args, **env)
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")], out


def system_sections(records) -> dict:
    return next(
        r["message"]["sections"]
        for r in records
        if r.get("type") == "message_start" and r["message"]["role"] == "system"
    )


def test_the_packs_skill_is_in_the_system_prompt_and_its_template_expands(pack_venv, isolated_environment):
    records, _ = json_run(pack_venv, "hi")
    skills = system_sections(records)["skills"]
    assert "<name>pack-release-notes</name>" in skills
    assert "site-packages/pi_resource_pack/skills/pack-release-notes/SKILL.md" in skills
    out = venv_pi(pack_venv, "--model", "faux/faux-1", "--no-session", "-p", "/pack-review app.py naming")
    assert out.returncode == 0, out.stderr
    assert "Review app.py for bugs, unclear names and missing tests. Focus on naming." in out.stdout
    skill_run = venv_pi(
        pack_venv, "--model", "faux/faux-1", "--no-session", "-p", "/skill:pack-release-notes v2"
    )
    assert "git describe --tags" in skill_run.stdout


def test_the_packs_commands_reach_rpc_and_a_filter_removes_them(pack_venv, isolated_environment):
    def commands():
        out = venv_pi(
            pack_venv,
            "--mode",
            "rpc",
            "--model",
            "faux/faux-1",
            "--no-session",
            input='{"id":"1","type":"get_commands"}\n',
        )
        [response] = [json.loads(line) for line in out.stdout.splitlines() if '"get_commands"' in line]
        return {c["name"]: c for c in response["data"]["commands"]}

    found = commands()
    assert found["pack-review"]["sourceInfo"]["source"] == "pi-resource-pack"
    assert found["pack-review"]["argumentHint"] == "<file> [focus]"
    assert found["skill:pack-release-notes"]["sourceInfo"]["origin"] == "package"
    write_settings(
        isolated_environment["agent"],
        {"packages": [{"source": "pi-resource-pack", "skills": [], "prompts": ["!pack-*"]}]},
    )
    assert not {"pack-review", "skill:pack-release-notes"} & set(commands())
    records, out = json_run(pack_venv, "hi")
    assert "pack-release-notes" not in system_sections(records).get("skills", "")
    assert out.stderr == ""  # a filter object for an installed package is no problem


def test_use_theme_accepts_the_packs_theme(pack_venv, isolated_environment):
    from interactive.terminal import Terminal, tmux_available

    if not tmux_available():
        pytest.skip("tmux is not installed")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(isolated_environment["home"]),
        "PI_CODING_AGENT_DIR": str(isolated_environment["agent"]),
        "PI_HOST_CACHE_DIR": os.environ["PI_HOST_CACHE_DIR"],
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
        "LANG": "C.UTF-8",
    }
    screens = {}
    for name in ("pack-dusk", "no-such-theme"):
        argv = [str(pack_venv / "bin" / "pi"), "--model", "faux/faux-1", "--no-session", "--use-theme", name]
        with Terminal(argv, env=env, cwd=isolated_environment["work"], width=100, height=30) as term:
            term.wait_for("ctrl+d exit", timeout=30)
            screens[name] = (term.screen(joined=True), term.screen(ansi=True, joined=True))
    plain, ansi = screens["pack-dusk"]
    assert "not found" not in plain
    assert "38;2;199;146;234" in ansi or "48;2;42;34;56" in ansi  # the theme's accent or user box colour
    assert "theme 'no-such-theme' not found" in screens["no-such-theme"][0]  # the check can fail


def run_pi(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pi_host", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def test_the_documented_example_ships_its_folders(isolated_environment, tmp_path):
    doc = (Path(__file__).resolve().parents[2] / "docs" / "packages.md").read_text()
    section = doc[doc.index("## Packages carry resources") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    package = tmp_path / "doc_pack"
    package.mkdir()
    (package / "__init__.py").write_text(code)
    skill(package / "skills" / "doc-skill", "doc-skill", "from the documented example")
    out = run_pi(
        "-e",
        str(package),
        "--model",
        "faux/faux-1",
        "--no-session",
        "--mode",
        "json",
        "hi",
        cwd=isolated_environment["work"],
    )
    assert out.returncode == 0, out.stderr
    records = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert "<name>doc-skill</name>" in system_sections(records)["skills"]


def test_a_pi_package_folder_in_settings_is_listed_and_its_template_expands(isolated_environment, tmp_path):
    folder = make_pack(tmp_path / "shared-pi-package")
    (folder / "extensions").mkdir()
    (folder / "extensions" / "tool.ts").write_text("export default () => {}")
    write_settings(isolated_environment["agent"], {"packages": [str(folder)]})
    listed = run_pi("list", cwd=isolated_environment["work"])
    assert f"{folder} -  [settings]" in listed.stdout.splitlines()
    assert "    prompts: /review, /summary" in listed.stdout.splitlines()
    [warning] = listed.stderr.splitlines()  # its TypeScript extension: one line
    assert "extensions/tool.ts" in warning and "its skills, prompts and themes load" in warning
    out = run_pi(
        "--model", "faux/faux-1", "--no-session", "-p", "/review main.py", cwd=isolated_environment["work"]
    )
    assert out.returncode == 0, out.stderr
    assert "faux: Review main.py now" in out.stdout
