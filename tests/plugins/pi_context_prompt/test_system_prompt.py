"""The system prompt sections as a session builds them (reference §8.1, §8.2)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pi_provider_faux
import pytest

from pi_host import hookimpl
from pi_host.plugins.registrations import ContextSource
from tests.support.context import make_session

SNAPSHOT = Path(__file__).parent / "snapshots" / "system_prompt.json"


@pytest.fixture
def fixed_package_dir(monkeypatch, tmp_path):
    package = tmp_path / "package"
    (package / "docs").mkdir(parents=True)
    (package / "docs" / "context.md").write_text("# Context\n")
    (package / "docs" / "zebra.md").write_text("intro\n# Zebra topics\n")
    monkeypatch.setenv("PI_PACKAGE_DIR", str(package))
    return package


def normalise(sections, cwd, agent, package):
    text = json.dumps(sections)
    for path, name in ((package, "<package>"), (agent, "<agent>"), (cwd, "<cwd>")):
        text = text.replace(str(path), name)
    return json.loads(text)


async def test_snapshot_for_a_fixed_directory(isolated_environment, fixed_package_dir):
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    (agent / "AGENTS.md").write_text("Global rule.\n")
    (work / "AGENTS.md").write_text("Project rule.\n")
    skill_dir = agent / "skills" / "pdf"
    skill_dir.mkdir(parents=True)
    (skill_dir / "SKILL.md").write_text("---\ndescription: Work with PDF files\n---\nUse pdftotext.\n")
    session = await make_session(work, flags={"append-system-prompt": ["Extra instruction."]})
    sections = normalise(await session.build_sections(), work, agent, fixed_package_dir)
    if os.environ.get("UPDATE_SNAPSHOTS"):
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(json.dumps(sections, indent=2) + "\n")
    assert sections == json.loads(SNAPSHOT.read_text())
    assert list(sections) == [
        "preamble",
        "tools",
        "rules",
        "docs",
        "addendum",
        "project_context",
        "skills",
        "cwd",
    ]


async def test_default_sections_content(isolated_environment):
    work = isolated_environment["work"]
    session = await make_session(work)
    sections = await session.build_sections()
    assert sections["tools"] == (
        "<tools>\n- read: Read a file's contents\n- bash: Run shell commands\n\n"
        "More tools than the ones listed here may be available; use any whose description fits the task.\n</tools>"
    )
    rules = sections["rules"].splitlines()[1:-1]
    assert rules[0].startswith("- No dedicated search tools")  # bash without grep/find/ls
    assert rules.count("- Prefer read over cat or sed for looking at files.") == 1  # de-duplicated
    assert rules[-2:] == [
        "- Keep your answers short and to the point.",
        "- Name file paths plainly whenever you refer to files.",
    ]
    assert sections["cwd"] == f"<cwd>\n{work}\n</cwd>"
    assert "project_context" not in sections and "addendum" not in sections and "skills" not in sections


async def test_tools_section_says_none_without_snippets(isolated_environment):
    session = await make_session(isolated_environment["work"], tools=[])
    sections = await session.build_sections()
    assert sections["tools"].startswith("<tools>\n(none)\n\n")
    assert "No dedicated search tools" not in sections["rules"]


async def test_system_prompt_flag_replaces_default(isolated_environment):
    work = isolated_environment["work"]
    (work / "AGENTS.md").write_text("ctx")
    session = await make_session(work, flags={"system-prompt": "You are a pirate."})
    sections = await session.build_sections()
    assert sections["preamble"] == "You are a pirate."
    assert list(sections) == ["preamble", "project_context", "cwd"]


async def test_system_prompt_flag_reads_a_file(isolated_environment, tmp_path):
    (tmp_path / "prompt.txt").write_text("From a file.")
    session = await make_session(
        isolated_environment["work"], flags={"system-prompt": str(tmp_path / "prompt.txt")}
    )
    assert (await session.build_sections())["preamble"] == "From a file."


async def test_project_system_md_wins_over_global_and_needs_trust(isolated_environment):
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    (agent / "SYSTEM.md").write_text("global system")
    (work / ".pi").mkdir()
    (work / ".pi" / "SYSTEM.md").write_text("project system")
    (agent / "APPEND_SYSTEM.md").write_text("global append")
    (work / ".pi" / "APPEND_SYSTEM.md").write_text("project append")
    trusted = await (await make_session(work)).build_sections()
    assert trusted["preamble"] == "project system"
    assert trusted["addendum"] == "<addendum>\nproject append\n</addendum>"
    untrusted = await (await make_session(work, approve=False)).build_sections()
    assert untrusted["preamble"] == "global system"
    assert untrusted["addendum"] == "<addendum>\nglobal append\n</addendum>"
    assert "tools" not in untrusted


async def test_append_flags_are_joined_and_beat_files(isolated_environment, tmp_path):
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    (agent / "APPEND_SYSTEM.md").write_text("global append")
    (tmp_path / "more.md").write_text("from file\n")
    session = await make_session(work, flags={"append-system-prompt": ["one", str(tmp_path / "more.md")]})
    sections = await session.build_sections()
    assert sections["addendum"] == "<addendum>\none\n\nfrom file\n</addendum>"
    assert "tools" in sections  # appending keeps the default prompt


async def test_no_context_files_flag(isolated_environment):
    work = isolated_environment["work"]
    (work / "AGENTS.md").write_text("ctx")
    sections = await (await make_session(work, flags={"no-context-files": True})).build_sections()
    assert "project_context" not in sections


async def test_skills_section_needs_read_or_bash(isolated_environment):
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    (agent / "skills" / "s").mkdir(parents=True)
    (agent / "skills" / "s" / "SKILL.md").write_text("---\ndescription: d\n---\n")
    assert "skills" in await (await make_session(work, tools=["bash"])).build_sections()
    assert "skills" not in await (await make_session(work, tools=[])).build_sections()
    no_skills = await (await make_session(work, flags={"no-skills": True})).build_sections()
    assert "skills" not in no_skills


async def test_custom_sections_from_a_plugin_come_after_cwd_and_can_replace(isolated_environment):
    class Custom:
        @hookimpl
        def register_context_sources(self):
            return [
                ContextSource("custom", sections=lambda ctx: {"team": "<team>\nhi\n</team>", "docs": None}),
                ContextSource("early", sections=lambda ctx: {"rules": "<rules>\n- mine\n</rules>"}, order=55),
            ]

    session = await make_session(isolated_environment["work"], plugins=[Custom()])
    sections = await session.build_sections()
    assert list(sections)[-2:] == ["cwd", "team"]
    assert "docs" not in sections
    assert sections["rules"] == "<rules>\n- mine\n</rules>"
    assert list(sections).index("rules") == 2  # replaced in place


async def test_leading_system_message_carries_sections(isolated_environment):
    work = isolated_environment["work"]
    (work / "AGENTS.md").write_text("Be brief.")
    session = await make_session(work)
    await session.prompt("hi")
    system = pi_provider_faux.requests[0]["messages"][0]
    assert system.role == "system"
    wire = system.to_json()
    assert wire["content"] == ""
    assert wire["sections"]["project_context"].startswith("<project_context>\n")
    assert [t["name"] for t in wire["toolsAdded"]] == ["read", "bash"]


async def test_files_are_read_once_per_session_until_reload(isolated_environment):
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    (work / "AGENTS.md").write_text("v1")
    (agent / "APPEND_SYSTEM.md").write_text("append v1")
    session = await make_session(work)
    first = await session.build_sections()
    (work / "AGENTS.md").write_text("v2")  # e.g. the agent edited it during the run
    (agent / "APPEND_SYSTEM.md").write_text("append v2")
    assert await session.build_sections() == first
    await session.host.dispatch("session_start", {"reason": "reload"}, session.ctx)
    reloaded = await session.build_sections()
    assert (
        "v2" in reloaded["project_context"] and reloaded["addendum"] == "<addendum>\nappend v2\n</addendum>"
    )


async def test_tools_section_follows_active_tools(isolated_environment):
    session = await make_session(isolated_environment["work"])
    assert "- bash:" in (await session.build_sections())["tools"]
    del session.active_tools["bash"]
    assert "- bash:" not in (await session.build_sections())["tools"]
