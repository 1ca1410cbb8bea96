"""The prompt-template context source: discovery per session and ``/name args`` expansion."""

from __future__ import annotations

from typing import Any

from pi_context_templates.templates import Discovery, Locations, discover, expand
from pi_host.lib import resources
from pi_host.lib.resources import PerSession

_discoveries: PerSession[Discovery] = PerSession()


async def templates_for(ctx: Any) -> Discovery:
    """The session's prompt templates, discovered once (again after a reload)."""
    session = ctx.session
    found = _discoveries.get(session)
    if found is None:
        disabled = bool(ctx.get_flag("no-prompt-templates"))
        extension_paths = [] if disabled else ctx.discovered_paths("promptPaths")
        from pi_host.lib.frontmatter import StatCache

        locations = Locations.for_session(
            ctx,
            setting="prompts",
            cli_flag="prompt-template",
            disabled=disabled,
            extension_paths=extension_paths,
        )
        found = _discoveries.put(session, discover(locations, StatCache("prompt-templates")))
        resources.print_warnings(found.warnings)
    return found


def forget(session: Any) -> None:
    """Drop the session's discovery (on reload); the next one asks plugins with reason reload."""
    _discoveries.forget(session)


async def expand_input(text: str, ctx: Any) -> str | None:
    return expand(text, (await templates_for(ctx)).templates)


async def commands(ctx: Any) -> list[dict[str, Any]]:
    """One command per template, in discovery order."""
    result = []
    for template in (await templates_for(ctx)).templates.values():
        entry: dict[str, Any] = {
            "name": template.name,
            "description": template.description,
            "source": "prompt",
            "sourceInfo": resources.source_info(template.file_path, template.source, cwd=ctx.cwd),
        }
        if template.argument_hint:
            entry["argumentHint"] = template.argument_hint
        result.append(entry)
    return result
