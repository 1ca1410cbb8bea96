"""Plugin registration and ordered, isolated hook dispatch on top of pluggy.

pluggy keeps the registry and checks signatures; this module adds what pi's contract needs:

* **validation at load**: wrappers and misspelled hooks are refused in one line naming the
  plugin and the hook; two plugins may not share a name;
* **order**: ``tryfirst`` handlers, then unmarked ones, then ``trylast``; within each group the
  load order of :data:`SOURCE_ORDER` (pluggy itself calls the last registered first);
* **return rules**: each event's :class:`pi_host.plugins.rules.Rule`, declared with its spec;
* **isolation**: a failing handler is named once per (plugin, hook, error) and the others go on.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pluggy

from pi_host.plugins import hookspecs
from pi_host.plugins.rules import IGNORED, BadReturn, Corrected, Rule, rule_of
from pi_host.plugins.timeouts import HookClock, HookTimeout, current_task, watch

PROJECT_NAME = "pi_host"
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
_IMPL_ATTRIBUTE = PROJECT_NAME + "_impl"

SOURCE_ORDER = ("builtin", "installed", "global", "project", "cli", "sdk")
"""Load order of plugin sources; a source not listed (tests, benches) loads after these."""


class _Manager(pluggy.PluginManager):
    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        # a module's dict answers pluggy's getattr_static scan (~1 ms a start) for unmarked names
        value = vars(plugin).get(name) if inspect.ismodule(plugin) else type
        if not callable(value) or (inspect.isfunction(value) and _IMPL_ATTRIBUTE not in value.__dict__):
            return None
        return super().parse_hookimpl_opts(plugin, name)


class PluginError(BaseException):
    """A plugin failed and ``--strict-plugins`` made that fatal. A ``BaseException`` so that no
    ``except Exception`` on the way (a provider stream, a tool, compaction) turns it into an
    ordinary error: it ends the run, and the command exits 1 after the one line naming it."""


@dataclass
class PluginRecord:
    """What ``pi plugins`` shows about one plugin."""

    name: str
    source: str
    """``builtin``, ``installed``, ``global``, ``project``, ``cli`` or ``sdk``."""
    origin: str = ""
    """Distribution name or file path."""
    version: str = ""
    hooks: list[str] = field(default_factory=list)
    import_ms: float = 0.0
    error: str | None = None
    disabled: bool = False


Failure = dict[str, Any]
"""``{extensionPath, plugin, event, error}``: one plugin failure, as listeners receive it."""
Chain = tuple[tuple[str, Callable[..., Any], tuple[str, ...]], ...]

_SPECS = hookspecs.specs()
_RULES: dict[str, Rule] = {name[3:]: rule_of(spec) for name, spec in _SPECS.items() if name.startswith("on_")}


def _mark_group(impl: Any) -> int:
    return 0 if impl.tryfirst else 2 if impl.trylast else 1


class PluginHost:
    """Owns the pluggy manager, the plugin records, dispatch and failure reporting."""

    def __init__(self, strict: bool = False, hook_timeout_ms: int = 30000) -> None:
        self._bus: Any = None
        self.strict = strict
        self.clock = HookClock(hook_timeout_ms / 1000)
        """The hooks' time limit (``pluginHookTimeoutMs``; 0: none) and what the watchdog sees."""
        self._watched = False
        self.pm = _Manager(PROJECT_NAME)
        for module in hookspecs.MODULES:
            self.pm.add_hookspecs(module)
        self.records: list[PluginRecord] = []
        self._rank: dict[str, tuple[int, int]] = {}
        self._chains: dict[str, Chain] = {}
        self._events: dict[str, tuple[Chain, Rule]] = {}
        self._listeners: list[Callable[[Failure], None]] = []
        self._failures: dict[tuple[str, str, str], int] = {}

    # --- registration ---------------------------------------------------------------------

    def register(self, plugin: Any, record: PluginRecord) -> bool:
        """Register ``plugin`` in its source's load order; problems are reported, not raised."""
        problems = self._check(plugin, record)
        if not problems:
            try:
                self.pm.register(plugin, name=record.name)
            except Exception as exc:  # a signature pluggy refuses
                problems = [" ".join(str(exc).split())]
        if problems:
            record.error = "; ".join(problems)
            self.records.append(record)
            for problem in problems:
                self.report(record.name, "load", problem, origin=record.origin)
            return False
        record.hooks = sorted(c.name for c in self.pm.get_hookcallers(plugin) or () if c.name in _SPECS)
        source = SOURCE_ORDER.index(record.source) if record.source in SOURCE_ORDER else len(SOURCE_ORDER)
        self._rank[record.name] = (source, len(self.records))
        self.records.append(record)
        self._chains.clear()
        self._events.clear()
        return True

    def _check(self, plugin: Any, record: PluginRecord) -> list[str]:
        clash = next((r for r in self.records if r.name == record.name and r.error is None), None)
        if clash is not None:
            return [
                f"{_where(record)} and {_where(clash)} both name a plugin {record.name!r}; only the first loads"
            ]
        if self.pm.is_registered(plugin):
            return [f"the same module is already registered as {self.pm.get_name(plugin)!r}"]
        problems = []
        for attribute in dir(plugin):
            # the marker's own attribute, read directly: pluggy's parse_hookimpl_opts is slow and
            # pm.register below scans the plugin again anyway
            options = getattr(getattr(plugin, attribute, None), _IMPL_ATTRIBUTE, None)
            if not isinstance(options, dict):
                continue
            if options.get("hookwrapper") or options.get("wrapper"):
                problems.append(
                    f"{attribute}: hookwrapper/wrapper implementations are not supported "
                    "(a handler receives the event and returns)"
                )
            elif attribute not in _SPECS and not options.get("optionalhook"):
                import difflib

                near = difflib.get_close_matches(attribute, _SPECS, n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                problems.append(f"unknown hook {attribute!r}{hint}")
        return problems

    def unregister(self, name: str) -> None:
        plugin = self.pm.get_plugin(name)
        if plugin is not None:
            self.pm.unregister(plugin)
            self._chains.clear()
            self._events.clear()

    @property
    def events(self) -> Any:
        """The :class:`pi_host.plugins.events.EventBus` shared by this host's plugins (made on
        first use)."""
        if self._bus is None:
            from pi_host.plugins.events import EventBus

            self._bus = EventBus(self)
        return self._bus

    def plugin_names(self) -> list[str]:
        return [r.name for r in self.records if r.error is None and not r.disabled]

    def record(self, name: str) -> PluginRecord | None:
        return next((r for r in self.records if r.name == name), None)

    # --- failures ----------------------------------------------------------------------------

    def on_error(self, listener: Callable[[Failure], None]) -> Callable[[], None]:
        """Subscribe to plugin failures (each distinct one once)."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def report(self, plugin: str, event: str, error: BaseException | str, origin: str = "") -> None:
        """Name a failure of ``plugin`` in ``event``. A repeat of the same failure is only
        counted (:meth:`repeated_failures`); with ``strict`` any failure raises."""
        message = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        key = (plugin, event, message)
        seen = self._failures.get(key, 0)
        self._failures[key] = seen + 1
        if seen == 0:
            record = self.record(plugin)
            payload = {
                "extensionPath": origin or (record.origin if record else "") or plugin,
                "plugin": plugin,
                "event": event,
                "error": message,
            }
            for listener in list(self._listeners):
                try:
                    listener(payload)
                except Exception:  # a broken listener must not hide the failure from the others
                    pass
            if not self._listeners:  # nobody shows failures (the SDK): one line, never silence
                import sys

                sys.stderr.write(f"pi: plugin {plugin!r} failed in {event}: {message}\n")
        if self.strict:
            raise PluginError(f"plugin {plugin!r} failed in {event}: {message}")

    def repeated_failures(self) -> list[str]:
        """One line per failure that happened more than once, with the count of repeats."""
        return [
            f"plugin {plugin!r} failed in {event} {count - 1} more time{'s' if count > 2 else ''}"
            " with the same error"
            for (plugin, event, _message), count in self._failures.items()
            if count > 1
        ]

    # --- calling -----------------------------------------------------------------------------

    def _chain(self, hook_name: str) -> Chain:
        chain = self._chains.get(hook_name)
        if chain is None:
            caller = getattr(self.pm.hook, hook_name, None)
            impls = caller.get_hookimpls() if caller is not None else []
            ordered = sorted(impls, key=lambda i: (_mark_group(i), self._rank.get(i.plugin_name, (99, 0))))
            chain = self._chains[hook_name] = tuple(
                (i.plugin_name, i.function, tuple(i.argnames)) for i in ordered
            )
        return chain

    def has(self, hook_name: str) -> bool:
        return bool(self._chain(hook_name))

    def collect_named(self, hook_name: str, **kwargs: Any) -> list[tuple[str, Any]]:
        """Call a registration hook on every plugin in order: ``(plugin name, item)`` pairs."""
        items: list[tuple[str, Any]] = []
        for plugin, function, argnames in self._chain(hook_name):
            try:
                result = function(*[kwargs[name] for name in argnames])
            except Exception as exc:
                self.report(plugin, hook_name, exc)
                continue
            if result is None:
                continue
            items.extend(
                (plugin, item) for item in (result if isinstance(result, (list, tuple)) else [result])
            )
        return items

    def collect(self, hook_name: str, **kwargs: Any) -> list[Any]:
        """A registration hook's items from every plugin, in order."""
        return [item for _plugin, item in self.collect_named(hook_name, **kwargs)]

    async def dispatch(self, event_name: str, event: dict[str, Any], ctx: Any = None) -> Any:
        """Run the ``on_<event_name>`` handlers one at a time under the event's return rule.

        Returns the stop value that ended the chain, else the rule's combination of the accepted
        returns (by default the last one), else None.
        """
        found = self._events.get(event_name)
        if found is None:  # cached per event name: this sits on the per-delta path
            found = self._events[event_name] = (
                self._chain("on_" + event_name),
                _RULES.get(event_name, IGNORED),
            )
        chain, rule = found
        if not chain:
            return None
        clock = self.clock
        if not self._watched and clock.limit_s > 0:
            self._watched = True
            watch(clock)
        accepted: list[Any] | None = None
        for plugin, function, argnames in chain:
            clock.next_token = token = clock.next_token + 1
            try:
                clock.running = token  # a sync handler runs: the watchdog may interrupt it
                try:
                    if len(argnames) == 2:
                        result = function(event, ctx)
                    elif argnames:
                        result = function(event) if argnames[0] == "event" else function(ctx)
                    else:
                        result = function()
                finally:
                    clock.running = 0
                if result is not None and inspect.isawaitable(result):
                    clock.awaits[token] = (time.monotonic(), current_task())
                    try:
                        result = await result
                    finally:
                        del clock.awaits[token]
            except (Exception, SystemExit, KeyboardInterrupt) as exc:
                # a plugin never ends the host: sys.exit() or a stray KeyboardInterrupt is a failure
                timed_out = isinstance(exc, HookTimeout) and token in clock.expired
                if timed_out:
                    clock.expired.discard(token)
                self.report(
                    plugin,
                    event_name,
                    f"timed out after {clock.limit_s:g} s" if timed_out else _describe(exc),
                )
                if rule.raise_blocks:
                    return {"block": True, "reason": _reason(exc, plugin, event_name, timed_out)}
                continue
            except BaseException:  # asyncio's CancelledError: the watchdog's, or a cancel of the run
                if token not in clock.expired:
                    raise
                clock.expired.discard(token)
                self.report(plugin, event_name, f"timed out after {clock.limit_s:g} s")
                if rule.raise_blocks:
                    return {"block": True, "reason": _reason(None, plugin, event_name, True)}
                continue
            if result is None or rule.ignored:
                continue
            if rule.check is not None:
                try:
                    result = rule.check(event, result)
                except Corrected as exc:
                    self.report(plugin, event_name, f"returned {exc}")
                    result = exc.value
                except BadReturn as exc:
                    self.report(plugin, event_name, f"returned {exc}; ignored")
                    continue
                if result is None:
                    continue
            if rule.stop is not None and rule.stop(result):
                return result
            if rule.fold is not None:
                rule.fold(event, result)
            if accepted is None:
                accepted = []
            accepted.append(result)
        if rule.combine is not None:
            return rule.combine(accepted or [])
        return accepted[-1] if accepted else None


def _describe(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r}); ignored"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _reason(exc: BaseException | None, plugin: str, event: str, timed_out: bool) -> str:
    """The blocking reason of a ``raise_blocks`` event (a tool call's error result)."""
    if timed_out or exc is None:
        return f"plugin {plugin!r} timed out in {event}"
    return (str(exc) or type(exc).__name__) if isinstance(exc, Exception) else _describe(exc)


def _where(record: PluginRecord) -> str:
    if record.source in ("builtin", "installed"):
        return f"{record.origin or record.source} {record.version}".strip()
    return record.origin or record.source
