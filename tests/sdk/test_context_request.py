"""End to end through the SDK: what the provider receives in a project with AGENTS.md, a skill and
a prompt template (the faux provider records every request)."""

from __future__ import annotations

import pi_provider_faux

from pi_host import hookimpl
from tests.support.context import make_session


def make_project(work):
    (work / "AGENTS.md").write_text("Always run the tests.\n")
    skill = work / ".pi" / "skills" / "changelog"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: changelog\ndescription: Write changelog entries\n---\nSee ./format.md for the layout.\n"
    )
    prompts = work / ".pi" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text(
        "---\ndescription: Review a file\n---\nReview $1 with focus on ${@:2}."
    )
    return skill / "SKILL.md"


def user_text(message):
    return "".join(block.text for block in message.content if block.type == "text")


async def test_request_carries_agents_md_skill_and_template(isolated_environment):
    work = isolated_environment["work"]
    skill_file = make_project(work)
    session = await make_session(work)
    await session.prompt('/review src/app.py "error handling" tests')
    request = pi_provider_faux.requests[-1]
    system, user = request["messages"][0], request["messages"][1]
    assert system.role == "system"
    assert (
        f'<project_instructions path="{work / "AGENTS.md"}">\nAlways run the tests.\n</project_instructions>'
        in (system.sections["project_context"])
    )
    assert "<name>changelog</name>" in system.sections["skills"]
    assert f"<location>{skill_file}</location>" in system.sections["skills"]
    assert user_text(user) == "Review src/app.py with focus on error handling tests."

    await session.prompt("/skill:changelog for v2")
    last_user = [m for m in pi_provider_faux.requests[-1]["messages"] if m.role == "user"][-1]
    assert user_text(last_user) == (
        f'<skill name="changelog" location="{skill_file}">\n'
        f"Relative paths in this skill refer to {skill_file.parent}.\n\n"
        "See ./format.md for the layout.\n</skill>\n\nfor v2"
    )
    # one leading system message for the whole conversation
    assert sum(1 for m in pi_provider_faux.requests[-1]["messages"] if m.role == "system") == 1


async def test_untrusted_project_skips_project_skills_and_templates(isolated_environment):
    work = isolated_environment["work"]
    make_project(work)
    session = await make_session(work, approve=False)
    await session.prompt("/review a.py b")
    request = pi_provider_faux.requests[-1]
    system, user = request["messages"][0], request["messages"][1]
    assert "skills" not in system.sections
    assert "project_context" in system.sections  # context files need no trust
    assert user_text(user) == "/review a.py b"


async def test_input_hook_runs_before_expansion(isolated_environment):
    work = isolated_environment["work"]
    make_project(work)

    class Rewriter:
        @hookimpl
        def on_input(self, event, ctx):
            if event["text"] == "go":
                return {"action": "transform", "text": "/review main.py speed"}
            return None

    session = await make_session(work, plugins=[Rewriter()])
    await session.prompt("go")
    assert user_text(pi_provider_faux.requests[-1]["messages"][1]) == "Review main.py with focus on speed."


async def test_resources_discover_adds_skill_and_prompt_paths(isolated_environment, tmp_path):
    work = isolated_environment["work"]
    extra = tmp_path / "ext"
    (extra / "skills" / "lint").mkdir(parents=True)
    (extra / "skills" / "lint" / "SKILL.md").write_text("---\ndescription: Lint code\n---\nRun ruff.")
    (extra / "prompts").mkdir()
    (extra / "prompts" / "hello.md").write_text("Hello $1!")

    class Provider:
        @hookimpl
        def on_resources_discover(self, event, ctx):
            assert event["cwd"] == str(work)
            return {"skillPaths": [str(extra / "skills")], "promptPaths": [str(extra / "prompts")]}

    session = await make_session(work, plugins=[Provider()])
    await session.prompt("/hello world")
    request = pi_provider_faux.requests[-1]
    assert "<name>lint</name>" in request["messages"][0].sections["skills"]
    assert user_text(request["messages"][1]) == "Hello world!"


async def test_cli_flags_skill_and_prompt_template(isolated_environment, tmp_path):
    work = isolated_environment["work"]
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "SKILL.md").write_text("---\nname: one\ndescription: The one\n---\nbody")
    (tmp_path / "t.md").write_text("T: $@")
    session = await make_session(
        work,
        flags={
            "skill": [str(tmp_path / "one")],
            "prompt-template": [str(tmp_path / "t.md")],
            "no-skills": True,
            "no-prompt-templates": True,
        },
    )
    await session.prompt("/t a b")
    request = pi_provider_faux.requests[-1]
    assert "<name>one</name>" in request["messages"][0].sections["skills"]
    assert user_text(request["messages"][1]) == "T: a b"


async def test_context_sources_list_their_commands(isolated_environment):
    work = isolated_environment["work"]
    skill_file = make_project(work)
    session = await make_session(work)
    listed = []
    for source in session.context_sources:
        if source.commands is not None:
            listed.extend(await source.commands(session.ctx))
    by_name = {c["name"]: c for c in listed}
    assert [c["name"] for c in listed] == ["skill:changelog", "review"]  # skills (60) before templates (70)
    assert by_name["review"]["source"] == "prompt" and by_name["review"]["description"] == "Review a file"
    assert by_name["review"]["sourceInfo"]["scope"] == "project"
    skill_cmd = by_name["skill:changelog"]
    assert skill_cmd["source"] == "skill" and skill_cmd["sourceInfo"]["path"] == str(skill_file)
    # pi's sourceInfo for a resource found in the project's .pi: auto-discovered, based there
    assert (skill_cmd["sourceInfo"]["source"], skill_cmd["sourceInfo"]["baseDir"]) == (
        "auto",
        str(work / ".pi"),
    )
    assert by_name["review"]["sourceInfo"]["baseDir"] == str(work / ".pi")


async def test_enable_skill_commands_false_hides_skill_commands_only(isolated_environment):
    work = isolated_environment["work"]
    make_project(work)
    session = await make_session(work, settings={"enableSkillCommands": False})
    skills = next(s for s in session.context_sources if s.name == "skills")
    assert await skills.commands(session.ctx) == []
    await session.prompt("/skill:changelog x")  # expansion still works
    assert user_text(pi_provider_faux.requests[-1]["messages"][1]).startswith('<skill name="changelog"')


async def test_reload_rediscovers_with_reason_reload(isolated_environment, tmp_path):
    work = isolated_environment["work"]
    reasons = []
    extra = tmp_path / "ext-prompts"
    extra.mkdir()

    class Provider:
        @hookimpl
        def on_resources_discover(self, event, ctx):
            reasons.append(event["reason"])
            return {"promptPaths": [str(extra)]}

    session = await make_session(work, plugins=[Provider()])
    await session.prompt("/later x")
    assert user_text(pi_provider_faux.requests[-1]["messages"][1]) == "/later x"
    (extra / "later.md").write_text("Later: $1")
    await session.start("reload")
    await session.prompt("/later x")
    assert (
        user_text([m for m in pi_provider_faux.requests[-1]["messages"] if m.role == "user"][-1])
        == "Later: x"
    )
    assert reasons == ["startup", "reload"]  # one discovery per session start
