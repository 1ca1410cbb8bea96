"""The prompt-template context source: discovery per session and ``/name args`` expansion."""

from __future__ import annotations

import sys
import weakref
from typing import Any

from pi_context_templates.templates import Discovery, Locations, discover, expand
from pi_host import paths

_cache: weakref.WeakKeyDictionary[Any, Discovery] = weakref.WeakKeyDictionary()
_reloaded: weakref.WeakSet[Any] = weakref.WeakSet()


def _list_flag(ctx: Any, name: str) -> list[str]:
    value = ctx.get_flag(name)
    if value is None:
        return []
    return [value] if isinstance(value, str) else [str(v) for v in value]


async def _extension_paths(ctx: Any) -> list[str]:
    host = ctx.session.host
    if not host.has("on_resources_discover"):
        return []
    found: list[str] = []

    def fold(_event: dict[str, Any], result: Any) -> None:
        if isinstance(result, dict) and isinstance(result.get("promptPaths"), list):
            found.extend(str(p) for p in result["promptPaths"])

    reason = "reload" if ctx.session in _reloaded else "startup"
    await host.dispatch("resources_discover", {"cwd": ctx.cwd, "reason": reason}, ctx, fold=fold)
    return found


async def templates_for(ctx: Any) -> Discovery:
    session = ctx.session
    found = _cache.get(session)
    if found is None:
        disabled = bool(ctx.get_flag("no-prompt-templates"))
        entries = (ctx.settings or {}).get("prompts")
        from pi_host.frontmatter import StatCache

        found = discover(
            Locations(
                agent_dir=paths.agent_dir(),
                cwd=ctx.cwd,
                trusted=ctx.get_flag("project-trusted") is not False,
                include_defaults=not disabled,
                settings_entries=list(entries) if isinstance(entries, list) else [],
                cli_paths=_list_flag(ctx, "prompt-template"),
                extension_paths=[] if disabled else await _extension_paths(ctx),
            ),
            StatCache("prompt-templates"),
        )
        _cache[session] = found
        for warning in found.warnings:
            print(f"Warning: {warning}", file=sys.stderr)
    return found


def forget(session: Any) -> None:
    """Drop the session's discovery (on reload); the next one asks plugins with reason reload."""
    _cache.pop(session, None)
    _reloaded.add(session)


async def expand_input(text: str, ctx: Any) -> str | None:
    return expand(text, (await templates_for(ctx)).templates)


_SCOPES = {
    "user": "user",
    "project": "project",
    "settings": "user",
    "cli": "temporary",
    "extension": "temporary",
}


async def commands(ctx: Any) -> list[dict[str, Any]]:
    """One command per template, in discovery order."""
    result = []
    for template in (await templates_for(ctx)).templates.values():
        entry: dict[str, Any] = {
            "name": template.name,
            "description": template.description,
            "source": "prompt",
            "sourceInfo": {
                "path": template.file_path,
                "source": "local",
                "scope": _SCOPES.get(template.source, "user"),
                "origin": "top-level",
            },
        }
        if template.argument_hint:
            entry["argumentHint"] = template.argument_hint
        result.append(entry)
    return result
