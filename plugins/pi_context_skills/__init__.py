"""Skills (the Agent Skills format): discovery, the ``skills`` prompt section, ``/skill:name``.

See docs/context.md. Flags: ``--skill <path>`` (repeatable), ``--no-skills`` / ``-ns``.
"""

from pi_host import hookimpl
from pi_host.lib.lazy import forget_on_reload, lazy
from pi_host.plugins.registrations import CliFlag, ContextSource

ORDER = 60
"""After project context (50), before the cwd section (90)."""

_expand_input = lazy("pi_context_skills.source:expand_input")


def _expand(text, ctx):
    # Only skill commands load the skills module; any other input passes untouched.
    return _expand_input(text, ctx) if text.startswith("/skill:") else None


@hookimpl
def register_context_sources():
    return [
        ContextSource(
            name="skills",
            sections=lazy("pi_context_skills.source:sections"),
            expand_input=_expand,
            commands=lazy("pi_context_skills.source:commands"),
            order=ORDER,
        )
    ]


@hookimpl
def register_cli_flags():
    return [
        CliFlag("skill", "Load a skill file or directory (repeatable)", type="list"),
        CliFlag("no-skills", "Do not discover skills (--skill still loads)", aliases=["-ns"]),
    ]


on_session_start = forget_on_reload("pi_context_skills.source:forget")
