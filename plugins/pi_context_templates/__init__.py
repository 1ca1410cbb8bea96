"""Prompt templates: ``/name args`` expands a Markdown template with its arguments.

Flags: ``--prompt-template <path>`` (repeatable), ``--no-prompt-templates`` / ``-np``.
See docs/context.md.
"""

from pi_host import hookimpl
from pi_host.registrations import CliFlag, ContextSource

ORDER = 70
"""After skills, so ``/skill:name`` is never taken for a template."""


async def _expand(text, ctx):
    if not text.startswith("/") or text.startswith("/skill:"):
        return None
    from pi_context_templates.source import expand_input

    return await expand_input(text, ctx)


async def _commands(ctx):
    from pi_context_templates.source import commands

    return await commands(ctx)


@hookimpl
def register_context_sources():
    return [ContextSource(name="prompt-templates", expand_input=_expand, commands=_commands, order=ORDER)]


@hookimpl
def register_cli_flags():
    return [
        CliFlag("prompt-template", "Load a prompt template file or directory (repeatable)", type="list"),
        CliFlag("no-prompt-templates", "Do not discover prompt templates", aliases=["-np"]),
    ]


@hookimpl
def on_session_start(event, ctx):
    if event.get("reason") == "reload":
        from pi_context_templates.source import forget

        forget(ctx.session)
