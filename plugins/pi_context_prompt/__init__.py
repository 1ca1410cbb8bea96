"""The default system prompt: preamble, tools, rules, docs, addendum, and the cwd section.

``--system-prompt`` / SYSTEM.md replace the default; ``--append-system-prompt`` (repeatable) /
APPEND_SYSTEM.md append. See docs/context.md.
"""

from pi_host import hookimpl
from pi_host.lib.lazy import forget_on_reload, lazy
from pi_host.plugins.registrations import CliFlag, ContextSource

HEAD_ORDER = 10
CWD_ORDER = 90
"""Sections are ordered by source: head (10), project_context (50), skills (60), cwd (90);
plugins at the default order (100) add their sections after cwd."""


def _cwd(ctx):
    from pi_context_prompt.build import cwd_section

    return cwd_section(ctx.cwd)


@hookimpl
def register_context_sources():
    return [
        ContextSource(name="prompt", sections=lazy("pi_context_prompt.source:head"), order=HEAD_ORDER),
        ContextSource(name="prompt-cwd", sections=_cwd, order=CWD_ORDER),
    ]


@hookimpl
def register_cli_flags():
    return [
        CliFlag("system-prompt", "Replace the default system prompt (text or a file path)", type="string"),
        CliFlag(
            "append-system-prompt",
            "Append text (or a file's contents) to the system prompt (repeatable)",
            type="list",
        ),
    ]


on_session_start = forget_on_reload("pi_context_prompt.source:forget")
