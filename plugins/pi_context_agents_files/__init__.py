"""AGENTS.md / CLAUDE.md context files as the ``project_context`` prompt section.

Not subject to project trust. ``--no-context-files`` / ``-nc`` turns it off. Read once per
session and again on reload. See docs/context.md.

The source also answers ``context_files(ctx)``: the paths of the files it loads, for a mode that
lists them (interactive mode's start-up ``[Context]`` section).
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


def _context_files(ctx):
    if ctx.get_flag("no-context-files"):
        return []
    from pi_context_agents_files.discovery import discover
    from pi_host.config import paths

    return [file.path for file in discover(paths.agent_dir(), ctx.cwd)]


@hookimpl
def register_context_sources():
    source = ContextSource(name="agents-files", sections=_sections, order=ORDER)
    source.context_files = _context_files  # an optional capability, looked up by name
    return [source]


@hookimpl
def register_cli_flags():
    return [CliFlag("no-context-files", "Do not load AGENTS.md / CLAUDE.md files", aliases=["-nc"])]


on_session_start = forget_on_reload("pi_context_agents_files.source:forget")
