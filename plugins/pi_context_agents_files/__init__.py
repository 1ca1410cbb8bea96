"""AGENTS.md / CLAUDE.md context files as the ``project_context`` prompt section.

Not subject to project trust. ``--no-context-files`` / ``-nc`` turns it off. Read once per
session and again on reload. See docs/context.md.
"""

from pi_host import hookimpl
from pi_host.lib.lazy import forget_on_reload
from pi_host.plugins.registrations import CliFlag, ContextSource

ORDER = 50
"""After the prompt head (10), before skills (60) and the cwd section (90)."""


def _sections(ctx):
    if ctx.get_flag("no-context-files"):
        return {}
    from pi_context_agents_files.source import sections

    return sections(ctx)


@hookimpl
def register_context_sources():
    return [ContextSource(name="agents-files", sections=_sections, order=ORDER)]


@hookimpl
def register_cli_flags():
    return [CliFlag("no-context-files", "Do not load AGENTS.md / CLAUDE.md files", aliases=["-nc"])]


on_session_start = forget_on_reload("pi_context_agents_files.source:forget")
