"""Packages carry resources: skills, prompt templates and themes a plugin declares with
``register_resources`` (or a pi-package folder the ``packages`` setting names) are found like the
agent dir's, after the settings' paths, narrowed by pi's filter objects; and, at the user's
boundary, an installed ``extension_examples/pi-resource-pack`` shows in ``pi list`` /
``pi plugins``, the system prompt, ``/`` commands and the theme lookup."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.venv import make_venv, pi_install_example, venv_pi


def skill(directory: Path, name: str, description: str = "does things") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\nbody of {name}\n")
    return path


def names(paths: list[str]) -> list[str]:
    return sorted(Path(p).parent.name if p.endswith("SKILL.md") else Path(p).name for p in paths)


def write_settings(directory: Path, data: dict) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "settings.json").write_text(json.dumps(data))


# --- unit: what a package ships and how filters narrow it ---------------------------------------


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
    from tests.support.terminal import Terminal, tmux_available

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
            # the loaded resources (and theme problems) are listed just after the banner
            term.wait_for("theme 'no-such-theme' not found" if name == "no-such-theme" else "[Prompts]")
            screens[name] = (term.screen(joined=True), term.screen(ansi=True, joined=True))
    plain, ansi = screens["pack-dusk"]
    assert "not found" not in plain
    assert "38;2;199;146;234" in ansi or "48;2;42;34;56" in ansi  # the theme's accent or user box colour
    assert "theme 'no-such-theme' not found" in screens["no-such-theme"][0]  # the check can fail
