"""Which plugins load for a directory: the one path every command takes (``pi``, ``pi --help``,
``pi plugins``, the SDK), so they never disagree.

1. The user's ``disabledPlugins`` (``<agent dir>/settings.json``) and ``PI_HOST_DISABLE_PLUGINS``
   always apply; names match an entry-point or file name, or a distribution name.
2. Built-in, installed, global (``<agent dir>/extensions``) and ``-e`` plugins load.
3. Project trust is decided (:func:`pi_host.config.trust.decide_trust`): ``-a``/``-na``, then the
   ``project_trust`` handlers of the plugins just loaded, then ``trust.json``, then
   ``defaultProjectTrust``.
4. A trusted project's ``.pi/extensions`` load and its ``disabledPlugins`` disable more; an
   untrusted project's extensions are listed as skipped and never imported.

After the files of each scope, the plugins its settings file names load (``extensions``,
``packages``: ``register_settings_plugins``; never for an untrusted project, nor with ``-ne``).

A name in a disabled list that matches nothing is reported in one line.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from pi_host.config import paths
from pi_host.config.defaults import DEFAULTS
from pi_host.config.json_files import read_json_object
from pi_host.config.trust import TrustDecision, decide_trust, save_trust_decision
from pi_host.plugins.dispatch import PluginHost, PluginRecord
from pi_host.plugins.loading import Candidate, find_plugins, is_named, load, named_candidate, normalise


class PluginRequest:
    """What a command knows when it loads plugins (a plain class: it loads on every start-up)."""

    def __init__(
        self,
        cwd: str,
        approve: bool | None = None,
        extension_paths: tuple[str, ...] = (),
        builtins_only: bool | None = None,
        strict: bool = False,
        mode: str = "print",
        can_ask: bool = False,
        extra_plugins: Sequence[Any] = (),
        discover_files: bool = True,
        on_error: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.cwd = cwd
        self.approve = approve
        """``-a`` (True) / ``-na`` (False) / neither."""
        self.extension_paths = tuple(extension_paths)
        """``-e`` paths."""
        self.builtins_only = builtins_only
        """``-ne``; None: ``PI_HOST_NO_PLUGINS``."""
        self.strict = strict
        self.mode = mode
        self.can_ask = can_ask
        """The chosen mode can ask the user whether to trust the project."""
        self.extra_plugins = tuple(extra_plugins)
        """Plugin objects of an SDK caller, registered last."""
        self.discover_files = discover_files
        """False: no ``extensions`` directories (SDK callers that want only their own plugins)."""
        self.on_error = on_error


class TrustContext:
    """``ctx`` of ``on_project_trust`` handlers: the session does not exist yet."""

    def __init__(self, cwd: str, mode: str, has_ui: bool = False) -> None:
        self.cwd, self.mode, self.has_ui = cwd, mode, has_ui


class LoadedPlugins:
    """The loaded host, the trust decision, and settings problems found on the way (one line each)."""

    def __init__(self, host: PluginHost, trust: TrustDecision, problems: list[str]) -> None:
        self.host, self.trust, self.problems = host, trust, problems


def disabled_plugins(data: dict[str, Any], path: str) -> tuple[list[str], str | None]:
    """The ``disabledPlugins`` names of one settings file's JSON, read without the schema (plugin
    loading needs only this and must stay cheap), and a problem line when the value is unusable."""
    value = data.get("disabledPlugins")
    if value is None:
        return [], None
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        return [], f"{path}: disabledPlugins: expected a list of plugin names; ignored"
    return list(value), None


def hook_timeout_ms(data: dict[str, Any]) -> int:
    value = data.get("pluginHookTimeoutMs")
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return int(DEFAULTS["pluginHookTimeoutMs"])


def _read(path: str, problems: list[str]) -> dict[str, Any]:
    data, error = read_json_object(path)
    if error:
        problems.append(error)
    return data


def disabled_from_env() -> list[str]:
    value = os.environ.get("PI_HOST_DISABLE_PLUGINS", "")
    return [part.strip() for part in value.split(",") if part.strip()]


def load_plugins(request: PluginRequest) -> LoadedPlugins:
    """Load the plugins ``request`` asks for, in the documented order; see the module doc."""
    cwd = os.path.abspath(request.cwd)
    problems: list[str] = []
    user_path = os.path.join(paths.agent_dir(), "settings.json")
    user = _read(user_path, problems)
    host = PluginHost(strict=request.strict, hook_timeout_ms=hook_timeout_ms(user))
    if request.on_error is not None:
        host.on_error(request.on_error)
    names, problem = disabled_plugins(user, user_path)
    problems += [problem] if problem else []
    disabled = {normalise(n) for n in [*disabled_from_env(), *names]}
    builtins_only = request.builtins_only
    if builtins_only is None:
        builtins_only = os.environ.get("PI_HOST_NO_PLUGINS", "") not in ("", "0")
    found = find_plugins(
        cache_dir=paths.cache_dir(),
        builtins_only=builtins_only,
        global_dir=os.path.join(paths.agent_dir(), "extensions") if request.discover_files else None,
        project_dir=os.path.join(cwd, ".pi", "extensions") if request.discover_files else None,
        extension_paths=tuple(request.extension_paths),
    )
    settings_plugins = not builtins_only and request.discover_files
    for source in ("builtin", "installed", "global", "cli"):
        for candidate in found[source]:
            load(host, candidate, disabled)
        if source == "global" and settings_plugins:
            _settings_plugins(host, user_path, source, problems, disabled)
    decision = decide_trust(
        cwd, request.approve, can_ask=request.can_ask, vote=lambda: _vote(host, cwd, request.mode)
    )
    project = found["project"]
    if decision.trusted:
        project_path = os.path.join(cwd, ".pi", "settings.json")
        names, problem = disabled_plugins(_read(project_path, problems), project_path)
        problems += [problem] if problem else []
        more = {normalise(n) for n in names} - disabled
        _disable_loaded(host, [c for group in found.values() for c in group], more)
        disabled |= more
        for candidate in project:
            load(host, candidate, disabled)
        if settings_plugins:
            _settings_plugins(host, project_path, "project", problems, disabled)
    else:
        for candidate in project:
            candidate.record.disabled = True
            candidate.record.error = "project not trusted: skipped, not imported (run with -a to load it)"
            host.records.append(candidate.record)
    for index, plugin in enumerate(request.extra_plugins):
        name = getattr(plugin, "__name__", None) or f"{type(plugin).__name__}-{index}"
        host.register(plugin, PluginRecord(name=name, source="sdk", origin=name))
    known = {
        normalise(name) for group in found.values() for c in group for name in (c.record.name, c.dist) if name
    }
    known |= {normalise(r.name) for r in host.records}
    for name in sorted(disabled - known):
        problems.append(f"disabledPlugins: no plugin or distribution named {name!r}")
    _last[:] = [host]
    return LoadedPlugins(host, decision, problems)


_last: list[PluginHost] = []


def last_loaded() -> PluginHost | None:
    """The plugins :func:`load_plugins` loaded last in this process (what a subcommand or a theme
    lookup sees without a session)."""
    return _last[-1] if _last else None


def _settings_plugins(
    host: PluginHost, path: str, source: str, problems: list[str], disabled: set[str]
) -> None:
    """Load what the ``extensions`` and ``packages`` of the settings file ``path`` name."""
    taken = {record.name for record in host.records}
    for item in host.collect("register_settings_plugins", settings_path=path, problems=problems):
        if isinstance(item, str) and item and item not in {r.origin for r in host.records}:
            load(host, named_candidate(item, source, taken, module=not os.path.isabs(item)), disabled)


def _disable_loaded(host: PluginHost, candidates: list[Candidate], names: set[str]) -> None:
    """A trusted project disables plugins that were loaded before its settings could be read."""
    for candidate in candidates:
        if names and is_named(candidate, names) and any(r is candidate.record for r in host.records):
            host.unregister(candidate.record.name)
            candidate.record.disabled = True


def _vote(host: PluginHost, cwd: str, mode: str) -> bool | None:
    """The first yes/no of the ``project_trust`` handlers (saved when they ask to remember)."""
    if not host.has("on_project_trust"):
        return None
    vote = run_now(host.dispatch("project_trust", {"cwd": cwd}, TrustContext(cwd, mode)))
    if not isinstance(vote, dict) or vote.get("trusted") not in ("yes", "no"):
        return None
    trusted = vote["trusted"] == "yes"
    if vote.get("remember"):
        save_trust_decision(cwd, trusted)
    return trusted


def run_now(coroutine: Any) -> Any:
    """Run a coroutine to completion from synchronous code, also inside a running event loop
    (the SDK's ``create_session``): there it runs on a helper thread with its own loop."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
