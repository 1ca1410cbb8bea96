"""Running an agent from Python without the CLI: where the pieces are put together.

import asyncio, pi_host

async def main():
    session = await pi_host.create_session(model="faux/faux-1", cwd=".")
    await session.prompt("List the files")
    print(session.last_assistant().text())

asyncio.run(main())

:func:`create_session` loads plugins the way the CLI does (project trust included), builds the
model catalog, opens a store, wires the compaction mechanism into the session and starts it.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from typing import Any

from pi_host.config import paths
from pi_host.config.models import ModelRegistry
from pi_host.config.settings import load_settings
from pi_host.lib.compaction.compactor import Compactor
from pi_host.lib.extension_api import ExtensionApi
from pi_host.lib.sessions.store import MemoryStore
from pi_host.plugins.dispatch import PluginHost
from pi_host.plugins.registrations import SessionStoreFactory
from pi_host.plugins.selection import PluginRequest, hook_timeout_ms, load_plugins
from pi_host.session.agent_session import AgentSession, SessionConfig
from pi_host.session.errors import SessionError
from pi_host.session.store import SessionStore, StoreOptions


@dataclass
class SessionOptions:
    cwd: str | None = None
    model: Any = None
    """A Model, or a pattern: ``provider/id``, an id or a name fragment."""
    provider: str | None = None
    thinking_level: str | None = None
    tools: list[str] | None = None
    no_tools: bool = False
    api_key: str | None = None
    plugins: list[Any] = field(default_factory=list)
    """Extra plugin objects or modules, registered after every discovered plugin."""
    extension_paths: tuple[str, ...] = ()
    builtins_only: bool | None = None
    strict_plugins: bool = False
    discover_plugins: bool = True
    approve: bool | None = None
    """Project trust: True / False as ``-a`` / ``-na``; None decides as the CLI does
    (``project_trust`` handlers, ``trust.json``, ``defaultProjectTrust``; never asks)."""
    store: Any = None
    """A ready SessionStore; otherwise a store plugin opens one from ``store_options``."""
    store_options: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] | None = None
    mode: str = "sdk"
    has_ui: bool = False
    tool_execution: str | None = None
    flags: dict[str, Any] = field(default_factory=dict)
    host: PluginHost | None = None
    """Plugins already loaded (the CLI); then ``project_trusted`` says what was decided."""
    project_trusted: bool | None = None
    registry: ModelRegistry | None = None
    start_reason: str = "startup"
    """The ``session_start`` reason: ``startup``, or ``new``, ``resume``, ``fork`` for a session
    that replaced another (``/new``, ``/resume``, ``/fork``, ``/clone``)."""
    previous_session_file: str | None = None
    """The file of the session this one replaced (``session_start``'s ``previousSessionFile``)."""


def open_store(host: PluginHost, settings: dict[str, Any], options: StoreOptions) -> SessionStore:
    """The store the ``sessionStore`` setting names, else the last registered one, else memory."""
    factories = [f for f in host.collect("register_session_stores") if isinstance(f, SessionStoreFactory)]
    wanted = settings.get("sessionStore")
    if wanted:
        factory = next((f for f in reversed(factories) if f.name == wanted), None)
        if factory is None:
            installed = ", ".join(f.name for f in factories) or "none"
            raise SessionError(f"No session store named {wanted!r} (installed: {installed})")
        return factory.open(options)
    if factories:
        return factories[-1].open(options)
    return MemoryStore(options.cwd, session_id=options.session_id)


async def create_session(options: SessionOptions | None = None, **kwargs: Any) -> AgentSession:
    """Load plugins, pick the model and open a session store; returns an idle, started session."""
    options = options or SessionOptions(**kwargs)
    cwd = os.path.abspath(options.cwd or os.getcwd())
    host, trusted = options.host, options.project_trusted
    if host is None:
        loaded = load_plugins(
            PluginRequest(
                cwd=cwd,
                approve=options.approve,
                extension_paths=tuple(options.extension_paths),
                builtins_only=options.builtins_only,
                strict=options.strict_plugins,
                mode=options.mode,
                extra_plugins=tuple(options.plugins),
                discover_files=options.discover_plugins,
            )
        )
        host, trusted = loaded.host, loaded.trust.trusted
    trusted = True if trusted is None else trusted
    settings = options.settings
    if settings is None:
        settings, _problems = load_settings(cwd, project_trusted=trusted)
    host.clock.limit_s = hook_timeout_ms(settings) / 1000  # the project's settings may change it
    registry = options.registry or ModelRegistry.from_plugins(host)
    if options.api_key and options.provider:
        registry.runtime_keys[options.provider] = options.api_key
    store = options.store
    if store is None:
        store = open_store(
            host, settings, StoreOptions(cwd=cwd, agent_dir=paths.agent_dir(), **options.store_options)
        )
    cwd = _session_cwd(store, cwd, options.has_ui)
    restored = store.build_context()
    model = options.model
    if isinstance(model, str):
        model = registry.resolve(model, options.provider)
    elif (
        model is None and restored.model and restored.model.get("provider") and restored.model.get("modelId")
    ):
        model = registry.find(restored.model["provider"], restored.model["modelId"])
    elif model is None and settings.get("defaultModel"):
        model = registry.resolve(str(settings["defaultModel"]), settings.get("defaultProvider"))
    if model is None:
        try:  # pi's choice: the best provider with a usable key, else its preferred default
            model = registry.default_model(options.provider)
        except LookupError:
            model = None
    thinking = options.thinking_level or (restored.thinking_level if restored.messages else None)
    per_model = settings.get("modelThinkingLevels")
    if not thinking and model is not None and isinstance(per_model, dict):  # pi's per-model start-up level
        thinking = per_model.get(f"{model.provider}/{model.id}")
    thinking = thinking or settings.get("defaultThinkingLevel") or "medium"
    if model is not None and not model.reasoning:
        thinking = "off"
    config = SessionConfig(
        cwd=cwd,
        model=model,
        thinking_level=thinking,
        tools=options.tools,
        no_tools=options.no_tools,
        tool_execution=options.tool_execution or settings.get("toolExecution") or "parallel",
        steering_mode=settings.get("steeringMode") or "one-at-a-time",
        follow_up_mode=settings.get("followUpMode") or "one-at-a-time",
        mode=options.mode,
        has_ui=options.has_ui,
        project_trusted=trusted,
        settings=settings,
        flags=dict(options.flags),
        api_key=options.api_key,
    )
    session = AgentSession(host, registry, store, config)
    session.ctx = ExtensionApi(session)  # ctx with pi's extension actions (send_message, exec...)
    session.compactor = Compactor(session)
    await session.start(options.start_reason, options.previous_session_file)
    return session


def _session_cwd(store: Any, cwd: str, has_ui: bool) -> str:
    """A saved session runs in the directory its header names (``--session``, ``--resume``,
    ``/resume``, ``/import``), as in pi. When that directory is gone pi refuses outside the
    terminal; the terminal goes on in the current directory, saying so."""
    stored = getattr(store, "cwd", None)
    if not getattr(store, "session_file", None) or not isinstance(stored, str) or not stored:
        return cwd
    if os.path.normpath(stored) == os.path.normpath(cwd):
        return cwd
    if os.path.isdir(stored):
        return stored
    if not has_ui:
        store.close()
        raise SessionError(
            f"Stored session working directory does not exist: {stored}\n"
            f"Session file: {store.session_file}\nCurrent working directory: {cwd}"
        )
    import sys

    sys.stderr.write(f"pi: session cwd does not exist: {stored}; continuing in {cwd}\n")
    return cwd


def run_prompt(prompt: str, **kwargs: Any) -> Any:
    """Run one prompt to completion synchronously; returns the final assistant message."""

    async def main() -> Any:
        session = await create_session(**kwargs)
        try:
            await session.prompt(prompt)
            return session.last_assistant()
        finally:
            await session.close()

    return asyncio.run(main())
