"""Skills: discovery, frontmatter validation, rendering and /skill: expansion (reference §8.4)."""

from __future__ import annotations

import os

import pytest
from pi_context_skills.discovery import Locations, discover, load_skill_file, name_problems
from pi_context_skills.render import expand_skill_command, skills_section, xml_escape


def skill(directory, name=None, description="Does things", body="Body text.", extra=""):
    directory.mkdir(parents=True, exist_ok=True)
    lines = ["---"]
    if name is not None:
        lines.append(f"name: {name}")
    if description is not None:
        lines.append(f"description: {description}")
    if extra:
        lines.append(extra)
    lines += ["---", body]
    (directory / "SKILL.md").write_text("\n".join(lines) + "\n")
    return directory / "SKILL.md"


def locations(env, cwd, **kwargs):
    return Locations(agent_dir=str(env["agent"]), home=str(env["home"]), cwd=str(cwd), **kwargs)


# --- name and description rules ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("a" * 65, "longer than 64"),
        ("My_Skill", "lowercase letters, digits and hyphens"),
        ("-lead", "start or end with a hyphen"),
        ("trail-", "start or end with a hyphen"),
        ("dou--ble", "two hyphens in a row"),
    ],
)
def test_each_name_rule_warns_but_loads(tmp_path, name, fragment):
    path = skill(tmp_path / "dir", name=f'"{name}"')
    warnings: list[str] = []
    loaded = load_skill_file(str(path), "test", standalone=False, warnings=warnings)
    assert loaded is not None and loaded.name == name
    assert len(warnings) == 1 and fragment in warnings[0] and str(path) in warnings[0]


def test_valid_names_have_no_problems():
    assert name_problems("a" * 64) == []
    assert name_problems("pdf-tools-2") == []


def test_long_description_warns_but_loads(tmp_path):
    path = skill(tmp_path / "ok", description="d" * 1025)
    warnings: list[str] = []
    assert load_skill_file(str(path), "t", False, warnings) is not None
    assert len(warnings) == 1 and "1024" in warnings[0]


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("---\nname: x\n---\nbody", "no description"),
        ("---\ndescription: ''\n---\nbody", "no description"),
        ("---\ndescription: [unclosed\n---\nbody", "invalid YAML"),
        ("---\n- a list\n---\nbody", "not a mapping"),
        ("no frontmatter at all", "no description"),
    ],
)
def test_unusable_skill_md_is_not_loaded_and_warns(tmp_path, content, fragment):
    (tmp_path / "bad").mkdir()
    path = tmp_path / "bad" / "SKILL.md"
    path.write_text(content)
    warnings: list[str] = []
    assert load_skill_file(str(path), "t", False, warnings) is None
    assert len(warnings) == 1 and fragment in warnings[0]


def test_name_defaults_to_directory_and_mismatch_is_silent(tmp_path):
    warnings: list[str] = []
    default = load_skill_file(str(skill(tmp_path / "from-dir")), "t", False, warnings)
    other = load_skill_file(str(skill(tmp_path / "dir-two", name="different")), "t", False, warnings)
    assert default.name == "from-dir" and other.name == "different" and warnings == []


def test_disable_model_invocation_and_ignored_fields(tmp_path):
    path = skill(
        tmp_path / "hidden",
        extra="disable-model-invocation: true\nlicense: MIT\nallowed-tools: [read]\nmetadata: {a: 1}",
    )
    warnings: list[str] = []
    loaded = load_skill_file(str(path), "t", False, warnings)
    assert loaded.disable_model_invocation is True and warnings == []


# --- discovery --------------------------------------------------------------------------------


def test_locations_in_order_and_first_name_wins(isolated_environment, tmp_path):
    env = isolated_environment
    cwd = tmp_path / "repo" / "pkg"
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    skill(env["agent"] / "skills" / "alpha", description="global alpha")
    skill(env["home"] / ".agents" / "skills" / "beta")
    skill(cwd / ".pi" / "skills" / "alpha", description="project alpha")
    skill(cwd / ".pi" / "skills" / "gamma")
    skill(tmp_path / "repo" / ".agents" / "skills" / "delta")
    skill(tmp_path / ".agents" / "skills" / "above-git-root")
    skill(tmp_path / "settings-skills" / "epsilon")
    skill(tmp_path / "cli" / "zeta")
    skill(tmp_path / "ext" / "eta")
    found = discover(
        locations(
            env,
            cwd,
            settings_entries=[str(tmp_path / "settings-skills")],
            cli_paths=[str(tmp_path / "cli" / "zeta")],
            extension_paths=[str(tmp_path / "ext")],
        )
    )
    assert [s.name for s in found.skills] == ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"]
    assert found.skills[0].description == "global alpha"
    assert [s.source for s in found.skills] == [
        "user",
        "user",
        "project",
        "project",
        "settings",
        "cli",
        "extension",
    ]
    collision = [w for w in found.warnings if "alpha" in w]
    assert len(collision) == 1 and "already used" in collision[0]


def test_untrusted_project_skills_are_skipped(isolated_environment, tmp_path):
    skill(tmp_path / ".pi" / "skills" / "p")
    skill(tmp_path / ".agents" / "skills" / "q")
    assert discover(locations(isolated_environment, tmp_path, trusted=False)).skills == []
    assert [s.name for s in discover(locations(isolated_environment, tmp_path)).skills] == ["p", "q"]


def test_no_skills_keeps_explicit_skill(isolated_environment, tmp_path):
    skill(isolated_environment["agent"] / "skills" / "global")
    path = skill(tmp_path / "explicit")
    found = discover(locations(isolated_environment, tmp_path, include_defaults=False, cli_paths=[str(path)]))
    assert [s.name for s in found.skills] == ["explicit"]


def test_scan_rules(isolated_environment, tmp_path):
    root = isolated_environment["agent"] / "skills"
    skill(root / "group" / "nested")  # found by recursion
    skill(root / "outer")
    skill(root / "outer" / "inner")  # below a skill: not scanned
    skill(root / ".hidden" / "secret")
    skill(root / "node_modules" / "dep")
    (root / "standalone.md").write_text("---\ndescription: A standalone skill\n---\nbody")
    (root / "notes.md").write_text("# no frontmatter: not a skill, no warning")
    (root / "group" / "deep.md").write_text("---\ndescription: only top-level .md files count\n---\n")
    found = discover(locations(isolated_environment, tmp_path))
    assert sorted(s.name for s in found.skills) == ["nested", "outer", "standalone"]
    assert found.warnings == []


def test_ignore_files_are_honoured(isolated_environment, tmp_path):
    root = isolated_environment["agent"] / "skills"
    skill(root / "kept")
    skill(root / "drafts" / "wip")
    skill(root / "team" / "private")
    skill(root / "team" / "public")
    (root / ".gitignore").write_text("drafts/\n")
    (root / "team" / ".fdignore").write_text("private\n")
    found = discover(locations(isolated_environment, tmp_path))
    assert sorted(s.name for s in found.skills) == ["kept", "public"]


def test_symlinks_followed_and_real_paths_loaded_once(isolated_environment, tmp_path):
    real = skill(tmp_path / "store" / "linked", name="linked").parent
    root = isolated_environment["agent"] / "skills"
    root.mkdir(parents=True)
    os.symlink(real, root / "linked")
    os.symlink(real, root / "again")
    os.symlink(root, root / "loop")
    found = discover(locations(isolated_environment, tmp_path))
    assert [s.name for s in found.skills] == ["linked"]


def test_settings_exclusions(isolated_environment, tmp_path):
    skill(tmp_path / "team" / "one")
    skill(tmp_path / "team" / "two")
    skill(tmp_path / "team" / "draft-three")
    found = discover(
        locations(
            isolated_environment,
            tmp_path,
            settings_entries=[str(tmp_path / "team"), f"-{tmp_path / 'team' / 'two'}", "!draft-*"],
        )
    )
    assert [s.name for s in found.skills] == ["one"]


# --- rendering and expansion ----------------------------------------------------------------


def test_section_lists_visible_skills_with_escaping(isolated_environment, tmp_path):
    skill(tmp_path / "s" / "a-skill", description="Use <b> & \"quotes\" 'too'")
    skill(tmp_path / "s" / "hidden", extra="disable-model-invocation: true")
    found = discover(locations(isolated_environment, tmp_path, cli_paths=[str(tmp_path / "s")]))
    body = skills_section(found.skills, "read")
    assert "<name>a-skill</name>" in body
    assert "<description>Use &lt;b&gt; &amp; &quot;quotes&quot; &apos;too&apos;</description>" in body
    assert f"<location>{tmp_path / 's' / 'a-skill' / 'SKILL.md'}</location>" in body
    assert "hidden" not in body  # §11 item 57
    assert "read tool" in body
    assert "bash" in skills_section(found.skills, "bash")
    assert "read tool" not in skills_section(found.skills, None)
    only_hidden = [s for s in found.skills if s.disable_model_invocation]
    assert skills_section(only_hidden, "read") is None


def test_skill_command_expands_even_when_hidden_from_model(isolated_environment, tmp_path):
    path = skill(
        tmp_path / "s" / "deploy",
        body="\n  Run the deploy script.\n\n",
        extra="disable-model-invocation: true",
    )
    skills = discover(locations(isolated_environment, tmp_path, cli_paths=[str(tmp_path / "s")])).skills
    expected = (
        f'<skill name="deploy" location="{path}">\n'
        f"Relative paths in this skill refer to {path.parent}.\n\n"
        "Run the deploy script.\n</skill>"
    )
    assert expand_skill_command("/skill:deploy", skills) == expected
    assert expand_skill_command("/skill:deploy  to prod\nnow ", skills) == expected + "\n\nto prod\nnow"
    assert expand_skill_command("/skill:unknown x", skills) is None
    assert expand_skill_command("/deploy", skills) is None


def test_xml_escape():
    assert xml_escape("a&b<c>\"'") == "a&amp;b&lt;c&gt;&quot;&apos;"


def test_parse_cache_gives_same_result_and_sees_edits(isolated_environment, tmp_path):
    from pi_context_skills.cache import SkillCache

    root = isolated_environment["agent"] / "skills"
    path = skill(root / "cached", description="first")
    (root / "bad").mkdir()
    (root / "bad" / "SKILL.md").write_text("---\nname: bad\n---\n")
    cold = discover(locations(isolated_environment, tmp_path), SkillCache())
    warm = discover(locations(isolated_environment, tmp_path), SkillCache())
    assert [vars(s) for s in warm.skills] == [vars(s) for s in cold.skills]
    assert warm.warnings == cold.warnings and len(warm.warnings) == 1
    path.write_text("---\ndescription: second, longer\n---\nbody\n")
    edited = discover(locations(isolated_environment, tmp_path), SkillCache())
    assert [s.description for s in edited.skills] == ["second, longer"]


def test_broken_cache_file_is_ignored(isolated_environment, tmp_path):
    from pi_context_skills.cache import SkillCache, cache_file

    skill(isolated_environment["agent"] / "skills" / "x")
    os.makedirs(os.path.dirname(cache_file()), exist_ok=True)
    with open(cache_file(), "w") as handle:
        handle.write("{garbage")
    assert [s.name for s in discover(locations(isolated_environment, tmp_path), SkillCache()).skills] == ["x"]


def test_settings_globs_expand(isolated_environment, tmp_path):
    skill(tmp_path / "packs" / "a" / "one")
    skill(tmp_path / "packs" / "b" / "two")
    skill(tmp_path / "other" / "three")
    found = discover(
        locations(isolated_environment, tmp_path, settings_entries=[str(tmp_path / "packs" / "*")])
    )
    assert [s.name for s in found.skills] == ["one", "two"]
