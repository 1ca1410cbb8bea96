"""Packages carry resources: skills, prompt templates and themes a plugin declares with
``register_resources`` (or a pi-package folder the ``packages`` setting names) are found like the
agent dir's, after the settings' paths, narrowed by pi's filter objects; and, at the user's
boundary, an installed ``extension_examples/pi-resource-pack`` shows in ``pi list`` /
``pi plugins``, the system prompt, ``/`` commands and the theme lookup."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_host import hookimpl
from pi_host.lib import resources
from pi_host.lib.render.themes import available_themes, load_theme
from pi_host.plugins.dispatch import PluginHost, PluginRecord
from pi_host.plugins.registrations import Resources
from tests.support.context import make_session

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
