"""The ``project_context`` section, read once per session (and again after a reload).

Files are read at start-up as pi does, not before every prompt: the agent often edits AGENTS.md
itself, and re-reading it would rewrite the prompt mid-conversation (a patch system message and a
prompt-cache miss on every edit).
"""

from __future__ import annotations

from typing import Any

from pi_context_agents_files.discovery import discover, render
from pi_host.config import paths
from pi_host.lib.resources import PerSession
from pi_host.protocol.transcript import wrap_section

_sections: PerSession[dict[str, str]] = PerSession()


def sections(ctx: Any) -> dict[str, str]:
    if ctx.get_flag("no-context-files"):
        return {}
    found = _sections.get(ctx.session)
    if found is None:
        body = render(discover(paths.agent_dir(), ctx.cwd))
        found = _sections.put(
            ctx.session, {"project_context": wrap_section("project_context", body)} if body else {}
        )
    return dict(found)


def forget(session: Any) -> None:
    _sections.forget(session)
