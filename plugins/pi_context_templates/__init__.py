"""Prompt templates: ``/name args`` expands a Markdown template with its arguments.

Flags: ``--prompt-template <path>`` (repeatable), ``--no-prompt-templates`` / ``-np``.
See docs/context.md.
"""

from pi_host import hookimpl
from pi_host.lib.lazy import forget_on_reload, lazy
from pi_host.plugins.registrations import CliFlag, ContextSource

ORDER = 70
"""After skills, so ``/skill:name`` is never taken for a template."""

_expand_input = lazy("pi_context_templates.source:expand_input")


def _expand(text, ctx):
    # Only slash input loads the templates module; skill commands belong to the skills source.
    if not text.startswith("/") or text.startswith("/skill:"):
        return None
    return _expand_input(text, ctx)


@hookimpl
def register_context_sources():
    return [
        ContextSource(
            name="prompt-templates",
            expand_input=_expand,
            commands=lazy("pi_context_templates.source:commands"),
            order=ORDER,
        )
    ]


@hookimpl
def register_cli_flags():
    return [
        CliFlag("prompt-template", "Load a prompt template file or directory (repeatable)", type="list"),
        CliFlag("no-prompt-templates", "Do not discover prompt templates", aliases=["-np"]),
    ]


on_session_start = forget_on_reload("pi_context_templates.source:forget")
