"""The skills context source: discovery per session, the ``skills`` section, ``/skill:`` input."""

from __future__ import annotations

import os
from typing import Any

from pi_context_skills.discovery import Discovery, Locations, discover
from pi_context_skills.render import expand_skill_command, skills_section
from pi_host.lib import resources
from pi_host.lib.resources import PerSession
from pi_host.protocol.transcript import wrap_section

_discoveries: PerSession[Discovery] = PerSession()


def locations_for(ctx: Any, extension_paths: list[str]) -> Locations:
    return Locations.for_session(
        ctx,
        setting="skills",
        cli_flag="skill",
        disabled=bool(ctx.get_flag("no-skills")),
        extension_paths=extension_paths,
        home=os.path.expanduser("~"),
    )


async def skills_for(ctx: Any) -> Discovery:
    """The session's skills, discovered once (again after a reload)."""
    session = ctx.session
    found = _discoveries.get(session)
    if found is None:
        extension_paths = [] if ctx.get_flag("no-skills") else ctx.discovered_paths("skillPaths")
        from pi_context_skills.cache import SkillCache

        found = _discoveries.put(session, discover(locations_for(ctx, extension_paths), SkillCache()))
        resources.print_warnings(found.warnings)
    return found


def forget(session: Any) -> None:
    """Drop the session's discovery (on reload); the next one asks plugins with reason reload."""
    _discoveries.forget(session)


def _reader(ctx: Any) -> tuple[bool, str | None]:
    """(whether the section may appear, which tool to name for loading skill files)."""
    tools = ctx.session.active_tools
    declared = [name for name in ("read", "bash") if name in tools]
    if not declared:
        return False, None
    for name in declared:
        if not getattr(tools[name], "hidden", False):
            return True, name
    return True, None


async def sections(ctx: Any) -> dict[str, str | None]:
    allowed, reader = _reader(ctx)
    if not allowed:
        return {}
    body = skills_section((await skills_for(ctx)).skills, reader)
    return {"skills": wrap_section("skills", body)} if body else {}


async def expand_input(text: str, ctx: Any) -> str | None:
    if not text.startswith("/skill:"):
        return None
    return expand_skill_command(text, (await skills_for(ctx)).skills)


async def commands(ctx: Any) -> list[dict[str, Any]]:
    """``skill:<name>`` commands, unless the setting ``enableSkillCommands`` is false."""
    if (ctx.settings or {}).get("enableSkillCommands") is False:
        return []
    return [
        {
            "name": f"skill:{skill.name}",
            "description": skill.description,
            "source": "skill",
            "sourceInfo": resources.source_info(skill.file_path, skill.source, cwd=ctx.cwd),
        }
        for skill in (await skills_for(ctx)).skills
    ]
