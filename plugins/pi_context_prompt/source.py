"""Per-session state of the prompt head: SYSTEM.md / APPEND_SYSTEM.md are read once per session
(and again after a reload), while the tools and rules sections follow the active tools on every
rebuild."""

from __future__ import annotations

from typing import Any

from pi_context_prompt.build import assemble, prompt_texts
from pi_host.config import paths
from pi_host.lib.resources import PerSession

_texts: PerSession[tuple[str | None, str | None]] = PerSession()


def head(ctx: Any) -> dict[str, str]:
    texts = _texts.get(ctx.session)
    if texts is None:
        texts = _texts.put(
            ctx.session,
            prompt_texts(
                ctx.cwd,
                paths.agent_dir(),
                ctx.get_flag("system-prompt"),
                ctx.get_flag("append-system-prompt"),
                ctx.is_project_trusted(),
            ),
        )
    return assemble(texts[0], texts[1], ctx.session.active_tools)


def forget(session: Any) -> None:
    _texts.forget(session)
