"""The skills context source: discovery per session, the ``skills`` section, ``/skill:`` input."""

from __future__ import annotations

import os
import sys
import weakref
from typing import Any

from pi_context_skills.discovery import Discovery, Locations, discover
from pi_context_skills.render import expand_skill_command, skills_section
from pi_host import paths
from pi_host.protocol.transcript import wrap_section

_cache: weakref.WeakKeyDictionary[Any, Discovery] = weakref.WeakKeyDictionary()
_reloaded: weakref.WeakSet[Any] = weakref.WeakSet()


def _list_flag(ctx: Any, name: str) -> list[str]:
    value = ctx.get_flag(name)
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


async def _extension_paths(ctx: Any) -> list[str]:
    """``skillPaths`` returned by ``resources_discover`` handlers, concatenated in load order."""
    host = ctx.session.host
    if not host.has("on_resources_discover"):
        return []
    found: list[str] = []

    def fold(_event: dict[str, Any], result: Any) -> None:
        if isinstance(result, dict) and isinstance(result.get("skillPaths"), list):
            found.extend(str(p) for p in result["skillPaths"])

    reason = "reload" if ctx.session in _reloaded else "startup"
    await host.dispatch("resources_discover", {"cwd": ctx.cwd, "reason": reason}, ctx, fold=fold)
    return found


def locations_for(ctx: Any, extension_paths: list[str]) -> Locations:
    settings = ctx.settings or {}
    entries = settings.get("skills")
    return Locations(
        agent_dir=paths.agent_dir(),
        home=os.path.expanduser("~"),
        cwd=ctx.cwd,
        trusted=ctx.get_flag("project-trusted") is not False,
        include_defaults=not ctx.get_flag("no-skills"),
        settings_entries=list(entries) if isinstance(entries, list) else [],
        cli_paths=_list_flag(ctx, "skill"),
        extension_paths=extension_paths,
    )


async def skills_for(ctx: Any) -> Discovery:
    """The session's skills, discovered once (again after a reload)."""
    session = ctx.session
    found = _cache.get(session)
    if found is None:
        extension_paths = [] if ctx.get_flag("no-skills") else await _extension_paths(ctx)
        from pi_context_skills.cache import SkillCache

        found = discover(locations_for(ctx, extension_paths), SkillCache())
        _cache[session] = found
        for warning in found.warnings:
            print(f"Warning: {warning}", file=sys.stderr)
    return found


def forget(session: Any) -> None:
    """Drop the session's discovery (on reload); the next one asks plugins with reason reload."""
    _cache.pop(session, None)
    _reloaded.add(session)


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


_SCOPES = {
    "user": "user",
    "project": "project",
    "settings": "user",
    "cli": "temporary",
    "extension": "temporary",
}


async def commands(ctx: Any) -> list[dict[str, Any]]:
    """``skill:<name>`` commands, unless the setting ``enableSkillCommands`` is false."""
    if (ctx.settings or {}).get("enableSkillCommands") is False:
        return []
    return [
        {
            "name": f"skill:{skill.name}",
            "description": skill.description,
            "source": "skill",
            "sourceInfo": {
                "path": skill.file_path,
                "source": "local",
                "scope": _SCOPES.get(skill.source, "user"),
                "origin": "top-level",
                "baseDir": skill.base_dir,
            },
        }
        for skill in (await skills_for(ctx)).skills
    ]
