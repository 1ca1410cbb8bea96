"""Plugin registration and ordered, isolated hook dispatch on top of pluggy.

pluggy keeps the registry and validates signatures; this module decides the *order* (load order,
first loaded runs first), the *return rule* (stop values end a chain, otherwise the last non-None
return wins) and *isolation* (a failing plugin is named in one line and the others go on).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pluggy

from pi_host.plugins import hookspecs

PROJECT_NAME = "pi_host"
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


class PluginError(Exception):
    """A plugin failed and ``--strict-plugins`` made that fatal."""


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


ErrorListener = Callable[[dict[str, Any]], None]


def is_stop(result: Any) -> bool:
    """A return value that ends an event chain: cancel, block, or an input marked handled."""
    if result.__class__ is dict:
        return bool(result.get("cancel") or result.get("block") or result.get("action") == "handled")
    return bool(
        getattr(result, "cancel", False)
        or getattr(result, "block", False)
        or getattr(result, "action", None) == "handled"
    )


class PluginHost:
    """Owns the pluggy manager, the load-ordered plugin list and error reporting."""

    def __init__(self, strict: bool = False) -> None:
        self.strict = strict
        self.pm = pluggy.PluginManager(PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self.records: list[PluginRecord] = []
        self._chains: dict[str, tuple[tuple[str, Callable[..., Any], tuple[str, ...]], ...]] = {}
        self._event_chains: dict[str, tuple[tuple[str, Callable[..., Any], tuple[str, ...]], ...]] = {}
        self._error_listeners: list[ErrorListener] = []

    # --- registration ---------------------------------------------------------------------

    def register(self, plugin: Any, record: PluginRecord) -> bool:
        """Register ``plugin`` after all earlier ones; failures are reported, not raised."""
        try:
            self.pm.register(plugin, name=record.name)
        except Exception as exc:  # invalid hook signatures, duplicate names
            record.error = f"{type(exc).__name__}: {exc}"
            self.records.append(record)
            self.report(record.name, "load", exc, origin=record.origin)
            return False
        record.hooks = sorted(
            caller.name for caller in self.pm.get_hookcallers(plugin) or () if caller.name in _KNOWN_HOOKS
        )
        self.records.append(record)
        self._invalidate()
        return True

    def unregister(self, name: str) -> None:
        plugin = self.pm.get_plugin(name)
        if plugin is not None:
            self.pm.unregister(plugin)
            self._invalidate()

    def _invalidate(self) -> None:
        self._chains.clear()
        self._event_chains.clear()

    def plugin_names(self) -> list[str]:
        return [r.name for r in self.records if r.error is None and not r.disabled]

    # --- errors ----------------------------------------------------------------------------

    def on_error(self, listener: ErrorListener) -> Callable[[], None]:
        """Subscribe to plugin failures (``{extensionPath, event, error}``)."""
        self._error_listeners.append(listener)
        return lambda: self._error_listeners.remove(listener)

    def report(self, plugin: str, event: str, error: BaseException | str, origin: str = "") -> None:
        message = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        payload = {"extensionPath": origin or plugin, "plugin": plugin, "event": event, "error": message}
        for listener in list(self._error_listeners):
            try:
                listener(payload)
            except Exception:
                pass
        if self.strict:
            raise PluginError(f"plugin {plugin!r} failed in {event}: {message}")

    # --- calling ---------------------------------------------------------------------------

    def _chain(self, hook_name: str) -> tuple[tuple[str, Callable[..., Any], tuple[str, ...]], ...]:
        chain = self._chains.get(hook_name)
        if chain is None:
            caller = getattr(self.pm.hook, hook_name, None)
            if caller is None:  # an event with no specific hook (e.g. auto_retry_start)
                self._chains[hook_name] = ()
                return ()
            # get_hookimpls() lists implementations in registration order (tryfirst/trylast
            # respected), which is our load order; pluggy itself would call them in reverse.
            chain = tuple(
                (impl.plugin_name, impl.function, tuple(impl.argnames)) for impl in caller.get_hookimpls()
            )
            self._chains[hook_name] = chain
        return chain

    def has(self, hook_name: str) -> bool:
        return bool(self._chain(hook_name))

    def collect(self, hook_name: str, **kwargs: Any) -> list[Any]:
        """Call a registration hook on every plugin in load order; concatenate the lists."""
        items: list[Any] = []
        for plugin, function, argnames in self._chain(hook_name):
            try:
                result = function(*[kwargs[name] for name in argnames])
            except Exception as exc:
                self.report(plugin, hook_name, exc)
                continue
            if result is None:
                continue
            if isinstance(result, (list, tuple)):
                items.extend(result)
            else:
                items.append(result)
        return items

    async def dispatch(
        self,
        event_name: str,
        event: dict[str, Any],
        ctx: Any = None,
        *,
        fold: Callable[[dict[str, Any], Any], None] | None = None,
        raise_stops: bool = False,
    ) -> Any:
        """Run ``on_<event_name>`` handlers one at a time in load order.

        Returns the stop value of the first handler that stops the chain, else the last non-None
        return (None when nobody had an opinion). ``fold`` merges each return into ``event``
        before the next handler runs (chained events). With ``raise_stops`` a raising handler
        becomes ``{"block": True, "reason": <message>}`` and stops the chain (``tool_call``).
        """
        chain = self._event_chains.get(event_name)
        if chain is None:
            chain = self._event_chains[event_name] = self._chain("on_" + event_name)
        if not chain:
            return None
        last = None
        for plugin, function, argnames in chain:
            try:
                if len(argnames) == 2:
                    result = function(event, ctx)
                elif argnames:
                    result = function(event) if argnames[0] == "event" else function(ctx)
                else:
                    result = function()
                if result is not None and inspect.isawaitable(result):
                    result = await result
            except Exception as exc:
                if raise_stops:
                    return {"block": True, "reason": str(exc) or type(exc).__name__, "error": exc}
                self.report(plugin, event_name, exc)
                continue
            if result is None:
                continue
            if is_stop(result):
                return result
            if fold is not None:
                fold(event, result)
            last = result
        return last


_KNOWN_HOOKS = frozenset(name for name in dir(hookspecs) if name.startswith(("on_", "register_")))
