"""``ctx.create_subsession``: a separate session for a sub-agent, sharing the parent's catalog
and keys (and by default its plugins) without reaching into ``ctx.session``."""

from __future__ import annotations

import os
from typing import Any

from pi_host.plugins.dispatch import PluginRecord, hookimpl

PROMPT_PLUGIN = "pi-host:subsession-prompt"
_PROMPTS: dict[int, tuple[str | None, str | None]] = {}
"""``id(session)`` -> (system prompt replacing the built one, text appended to it)."""


class _SubsessionPrompt:
    """Gives a sub-session its own system prompt (first, so other plugins chain onto it)."""

    @hookimpl(tryfirst=True)
    def on_before_agent_start(self, event: Any, ctx: Any) -> Any:
        found = _PROMPTS.get(id(ctx.session)) if ctx is not None else None
        if found is None:
            return None
        replace, append = found
        prompt = replace if replace is not None else event["systemPrompt"]
        if append:
            prompt = f"{prompt}\n\n{append}" if prompt else append
        return {"systemPrompt": prompt}

    @hookimpl
    def on_session_shutdown(self, ctx: Any) -> None:
        if ctx is not None:
            _PROMPTS.pop(id(ctx.session), None)


async def create_subsession(
    parent: Any,
    *,
    model: Any = None,
    thinking_level: str | None = None,
    tools: list[str] | None = None,
    cwd: str | None = None,
    system_prompt: str | None = None,
    append_system_prompt: str | None = None,
    plugins: list[Any] | None = None,
    store: Any = None,
    mode: str = "subagent",
    settings: dict[str, Any] | None = None,
) -> Any:
    from pi_host.lib.llm.tokens import clamp_thinking_level
    from pi_host.lib.sessions.store import MemoryStore
    from pi_host.runtime.compactor import Compactor
    from pi_host.session.agent_session import AgentSession
    from pi_host.session.config import SessionConfig

    session = parent.session
    work = os.path.abspath(cwd or parent.cwd)
    trusted = parent.is_project_trusted()
    host = session.host  # the plugins already loaded (and the trust already decided)
    if plugins is not None:  # a fresh set instead: the built-in plugins and these
        from pi_host.plugins.selection import PluginRequest, load_plugins

        request = PluginRequest(
            cwd=work, approve=trusted, builtins_only=True, mode=mode, extra_plugins=tuple(plugins)
        )
        host = load_plugins(request).host
    if (system_prompt is not None or append_system_prompt) and host.record(PROMPT_PLUGIN) is None:
        host.register(_SubsessionPrompt(), PluginRecord(name=PROMPT_PLUGIN, source="runtime"))
    registry = session.registry
    if isinstance(model, str):
        provider, _, model_id = model.partition("/")
        model = (registry.find(provider, model_id) if model_id else None) or registry.resolve(model)
    model = model if model is not None else parent.model
    level = thinking_level or parent.thinking_level
    settings = settings if settings is not None else parent.settings
    config = SessionConfig(
        cwd=work,
        model=model,
        thinking_level=clamp_thinking_level(model, level) if model is not None else "off",
        tools=tools,
        tool_execution=settings.get("toolExecution") or "parallel",
        mode=mode,
        project_trusted=trusted,
        settings=settings,
        flags=dict(session.config.flags),
        api_key=session.config.api_key,
        warn=session.config.warn,
    )
    sub = AgentSession(
        host,
        registry,
        store if store is not None else MemoryStore(work),
        config,
        context=type(parent),  # the parent's ctx class: ExtensionApi
        compactor=Compactor,
    )
    if system_prompt is not None or append_system_prompt:
        _PROMPTS[id(sub)] = (system_prompt, append_system_prompt)
    await sub.start()
    return sub
