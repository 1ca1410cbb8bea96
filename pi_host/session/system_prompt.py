"""Declaring the prompt and the tools in the transcript (reference §1.2, §8.1).

Before the first request the session declares one leading system message: every prompt section
contributed by the context sources, and every active tool. Afterwards only changes are declared,
as patch system messages: tools added, redefined or withdrawn, and (once per prompt) sections
whose text changed.
"""

from __future__ import annotations

import inspect
from typing import Any

from pi_host.agent.declare import tool_changes
from pi_host.protocol import SystemMessage
from pi_host.protocol.transcript import replay_system, wrap_section

DEFAULT_PREAMBLE = (
    "You are a coding assistant running inside pi, a coding agent harness. You help the user "
    "inspect files, run commands and change code."
)


class SystemPromptDeclarer:
    def __init__(self, session: Any) -> None:
        self.session = session
        self.refresh_pending = True
        """Set at each prompt: re-read the sections once before its first request."""

    async def build_sections(self) -> dict[str, str | None]:
        """The prompt sections from every context source (load order, later replaces)."""
        sections: dict[str, str | None] = {}
        if not self.session.context_sources:
            sections["preamble"] = DEFAULT_PREAMBLE
            sections["cwd"] = wrap_section("cwd", self.session.config.cwd.replace("\\", "/"))
            return sections
        for source in self.session.context_sources:
            if source.sections is None:
                continue
            try:
                produced = source.sections(self.session.ctx)
                if inspect.isawaitable(produced):
                    produced = await produced
            except Exception as exc:
                self.session.report(source, "sections", exc)
                continue
            for name, value in (produced or {}).items():
                if value is None:
                    sections.pop(name, None)
                else:
                    sections[name] = value
        return sections

    async def declare_changes(self, context: list[Any], pending: list[Any]) -> list[Any]:
        """Declare the prompt and tools before the first request; later, patch tool changes."""
        declared = [tool.declaration() for tool in self.session.active_tools.values()]
        if not any(getattr(m, "role", None) == "system" for m in context):
            system = SystemMessage(content="", sections=await self.build_sections(), tools_added=declared)
            return [system, *pending]
        state = replay_system(context)
        section_patch: dict[str, str | None] = {}
        if self.refresh_pending:
            # once per prompt: context files, skills or flags may have changed since the last one
            self.refresh_pending = False
            fresh = await self.build_sections()
            section_patch = {
                name: value for name, value in fresh.items() if state.sections.get(name) != value
            }
            section_patch.update({name: None for name in state.sections if name not in fresh})
        added, removed = tool_changes(state.tools, declared)
        if not added and not removed and not section_patch:
            return pending
        patch = SystemMessage(
            content="",
            sections=section_patch or None,
            tools_added=added or None,
            tools_removed=removed or None,
        )
        return [patch, *pending]
