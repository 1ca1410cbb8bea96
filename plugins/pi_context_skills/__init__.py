"""Skills (the Agent Skills format): discovery, the ``skills`` prompt section, ``/skill:name``.

See docs/context.md. Flags: ``--skill <path>`` (repeatable), ``--no-skills`` / ``-ns``.
"""

from pi_host import hookimpl
from pi_host.registrations import CliFlag, ContextSource

ORDER = 60
"""After project context (50), before the cwd section (90)."""


async def _sections(ctx):
    from pi_context_skills.source import sections

    return await sections(ctx)


async def _expand(text, ctx):
    if not text.startswith("/skill:"):
        return None
    from pi_context_skills.source import expand_input

    return await expand_input(text, ctx)


async def _commands(ctx):
    from pi_context_skills.source import commands

    return await commands(ctx)


@hookimpl
def register_context_sources():
    return [
        ContextSource(
            name="skills", sections=_sections, expand_input=_expand, commands=_commands, order=ORDER
        )
    ]


@hookimpl
def register_cli_flags():
    return [
        CliFlag("skill", "Load a skill file or directory (repeatable)", type="list"),
        CliFlag("no-skills", "Do not discover skills (--skill still loads)", aliases=["-ns"]),
    ]


@hookimpl
def on_session_start(event, ctx):
    if event.get("reason") == "reload":
        from pi_context_skills.source import forget

        forget(ctx.session)
