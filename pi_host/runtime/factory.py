"""Building sessions: every session of a run — the first one, ``/new``, ``/resume``, ``/fork``,
``/clone``, ``/reload``, a sub-agent's — is made here, complete before its first event.

A session is built with everything handed in at construction (the ``ctx`` class, the compaction
driver, the tool selection of the command line, the mode's UI and session control), then started
(``session_start``). So a plugin's ``session_start`` handler sees the tools the run will have and
can already use ``ctx.ui``.

:class:`SessionOptions` is what the SDK's ``create_session`` takes; :class:`SessionFactory` keeps
one run's options and builds each of its sessions; :func:`build_session` is the one place that
turns options into a started :class:`~pi_host.session.agent_session.AgentSession`.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pi_host.config import paths
from pi_host.config.models import ModelRegistry
from pi_host.config.settings import load_settings
from pi_host.lib.sessions.store import MemoryStore
from pi_host.plugins.dispatch import PluginHost
from pi_host.plugins.registrations import SessionStoreFactory
from pi_host.plugins.selection import PluginRequest, hook_timeout_ms, load_plugins
from pi_host.runtime.compactor import Compactor
from pi_host.runtime.editable_plugins import forget_changed_modules
from pi_host.runtime.extension_api import ExtensionApi
from pi_host.session.agent_session import AgentSession
from pi_host.session.config import SessionConfig
from pi_host.session.errors import SessionError
from pi_host.session.parts import ToolSelection
from pi_host.session.store import SessionStore, StoreOptions


@dataclass
class SessionOptions:
    """Everything a new session is built from (the command line's choices, settings, plugins)."""

    cwd: str | None = None
    model: Any = None
    """A Model, or a pattern: ``provider/id``, an id or a name fragment."""
    provider: str | None = None
    thinking_level: str | None = None
    tools: list[str] | None = None
    no_tools: bool = False
    tool_selection: ToolSelection | None = None
    """The command line's ``--tools`` / ``--exclude-tools`` / ``--no-builtin-tools``."""
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
    ui: Any = None
    """The mode's user interface (``ctx.ui``); None: headless (dialogs answer their default)."""
    control: Any = None
    """The mode's :class:`pi_host.runtime.switching.SessionControl` (``ctx.new_session``...)."""
    warn: Callable[[str], None] | None = None
    limits: Any = None
    """Budget limits (a :class:`pi_host.agent.budget.Limits`; ``--max-turns``...), over the
    ``budgets`` setting."""
    parent_budget: Any = None
    """The enclosing budget (a sub-agent's parent, a batch): this session's spending counts there."""
    budget_scope: str = "session"


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


async def build_session(options: SessionOptions) -> AgentSession:
    """Load plugins (unless given), pick the model, open a store, build the session with its
    ``ctx``, compaction driver, tools, UI and control, and start it."""
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
    model = _model(options, registry, settings, restored)
    config = SessionConfig(
        cwd=cwd,
        model=model,
        thinking_level=_thinking(options, settings, restored, model),
        tools=options.tools,
        no_tools=options.no_tools,
        tool_selection=options.tool_selection,
        tool_execution=options.tool_execution or settings.get("toolExecution") or "parallel",
        steering_mode=settings.get("steeringMode") or "one-at-a-time",
        follow_up_mode=settings.get("followUpMode") or "one-at-a-time",
        mode=options.mode,
        has_ui=options.has_ui,
        project_trusted=trusted,
        settings=settings,
        flags=dict(options.flags),
        api_key=options.api_key,
        warn=options.warn,
    )
    session = AgentSession(
        host, registry, store, config, context=ExtensionApi, compactor=Compactor, ui=options.ui,
        control=options.control,
    )  # fmt: skip
    from pi_host.runtime.budgets import attach_budget, limits_for

    attach_budget(session, limits_for(options.limits, settings), options.parent_budget, options.budget_scope)
    await session.start(options.start_reason, options.previous_session_file)
    return session


def _model(options: SessionOptions, registry: ModelRegistry, settings: dict[str, Any], restored: Any) -> Any:
    model = options.model
    if isinstance(model, str):
        return registry.resolve(model, options.provider)
    if model is not None:
        return model
    if restored.model and restored.model.get("provider") and restored.model.get("modelId"):
        return registry.find(restored.model["provider"], restored.model["modelId"])
    if settings.get("defaultModel"):
        return registry.resolve(str(settings["defaultModel"]), settings.get("defaultProvider"))
    try:  # pi's choice: the best provider with a usable key, else its preferred default
        return registry.default_model(options.provider)
    except LookupError:
        return None


def _thinking(options: SessionOptions, settings: dict[str, Any], restored: Any, model: Any) -> str:
    thinking = options.thinking_level or (restored.thinking_level if restored.messages else None)
    per_model = settings.get("modelThinkingLevels")
    if not thinking and model is not None and isinstance(per_model, dict):  # pi's per-model start-up level
        thinking = per_model.get(f"{model.provider}/{model.id}")
    thinking = thinking or settings.get("defaultThinkingLevel") or "medium"
    return "off" if model is not None and not model.reasoning else thinking


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
    sys.stderr.write(f"pi: session cwd does not exist: {stored}; continuing in {cwd}\n")
    return cwd


class SessionFactory:
    """One run's way of making sessions: the options of the run (``base``), the mode's UI and
    session control (:meth:`bind`), and what a reload loads again (``reload_plugins``).

    The CLI makes one per run and hands it to the mode (:class:`pi_host.plugins.modes.ModeRun`);
    the switching operations (:mod:`pi_host.runtime.switching`) and plugins' ``ctx.new_session``
    and friends use it for every session that replaces another."""

    def __init__(
        self,
        base: SessionOptions,
        *,
        session_dir: str | None = None,
        reload_plugins: Callable[[], tuple[PluginHost, bool | None]] | None = None,
        after_build: Callable[[AgentSession], Any] | None = None,
    ) -> None:
        self.base = base
        self.session_dir = session_dir
        """Where this run keeps session files (``--session-dir`` or the settings); None: the default."""
        self._reload_plugins = reload_plugins
        self._after_build = after_build

    def bind(self, *, ui: Any = None, control: Any = None) -> None:
        """The mode's UI and session control, given to every session built from now on."""
        self.base = dataclasses.replace(self.base, ui=ui, control=control)

    async def _build(self, **changes: Any) -> AgentSession:
        session = await build_session(dataclasses.replace(self.base, **changes))
        if self._after_build is not None:
            self._after_build(session)
        return session

    async def open(self) -> AgentSession:
        """The run's first session (the command line's ``--session``, ``-c``, ``--fork``...)."""
        return await self._build()

    async def new(
        self,
        session_file: str | None = None,
        *,
        reason: str | None = None,
        previous_session_file: str | None = None,
    ) -> AgentSession:
        """A fresh session (``/new``), or the session of ``session_file`` resumed (``/resume``)."""
        stored: dict[str, Any] = {
            "session_dir": self.session_dir,
            "no_session": bool(self.base.store_options.get("no_session")) and not session_file,
        }
        if session_file:
            stored["session"] = session_file
        return await self._build(
            store_options=stored,
            start_reason=reason or ("resume" if session_file else "new"),
            previous_session_file=previous_session_file,
        )

    async def on_store(self, store: Any, *, reason: str, previous_session_file: str | None) -> AgentSession:
        """A session on ``store``, already switched to a forked or cloned file."""
        return await self._build(
            store=store, store_options={}, start_reason=reason, previous_session_file=previous_session_file
        )

    async def reload(self, current: AgentSession) -> AgentSession:
        """``/reload``: the plugins, settings and context of ``current`` loaded again, on the same
        store (``session_shutdown`` with reason ``reload`` first; the store stays open)."""
        if self._reload_plugins is None:
            raise SessionError("This run cannot reload")
        forget_changed_modules()  # plugins installed by reference: their edited code loads again
        host, trusted = self._reload_plugins()
        settings, _ = load_settings(current.config.cwd, project_trusted=bool(trusted))
        await current.host.dispatch("session_shutdown", {"reason": "reload"}, current.ctx)
        registry = ModelRegistry.from_plugins(host)
        registry.runtime_keys.update(current.registry.runtime_keys)  # --api-key
        return await self._build(
            store=current.store, store_options={}, start_reason="reload", model=current.model,
            thinking_level=current.thinking_level, settings=settings, host=host, project_trusted=trusted,
            registry=registry,
        )  # fmt: skip
