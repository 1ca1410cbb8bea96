"""``ctx.on(event, handler)``: a hook handler added while pi-host runs (pi's ``pi.on``).

Each subscription is a one-hook plugin registered on the host after the loaded ones, so it runs
under the event's return rule, in subscription order, with the hooks' isolation; its failures
are reported under the name of the plugin that subscribed."""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable
from typing import Any

from pi_host.plugins.dispatch import PluginRecord, hookimpl
from pi_host.plugins.hookspecs import specs

_COUNTER = itertools.count(1)


def owner_of(host: Any, handler: Callable[..., Any]) -> str:
    """The loaded plugin whose module defined ``handler`` (else its module's name)."""
    module = getattr(handler, "__module__", None) or "?"
    names = {record.name for record in getattr(host, "records", ())}
    for candidate in (module, module.rpartition(".")[2], module.partition(".")[0]):
        if candidate in names:
            return candidate
    return module


class _Subscription:
    """The plugin object of one subscription (its one ``on_<event>`` attribute is set below)."""


def subscribe(host: Any, event_name: str, handler: Callable[..., Any]) -> Callable[[], None]:
    name = event_name[3:] if event_name.startswith("on_") else event_name
    hook = f"on_{name}"
    if hook not in specs():
        import difflib

        near = difflib.get_close_matches(hook, [n for n in specs() if n.startswith("on_")], n=1)
        hint = f" (did you mean {near[0][3:]!r}?)" if near else ""
        raise ValueError(f"Unknown event {event_name!r}{hint}")
    if not callable(handler):
        raise TypeError("ctx.on needs a callable handler")
    owner = owner_of(host, handler)
    wants_ctx = _positional_count(handler) != 1

    async def run(event: Any, ctx: Any) -> Any:
        try:
            result = handler(event, ctx) if wants_ctx else handler(event)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:
            host.report(owner, name, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
            if name == "tool_call":  # as for a hook: a raising tool_call handler blocks the call
                return {"block": True, "reason": str(exc) or type(exc).__name__}
            return None
        return result

    plugin = _Subscription()
    setattr(plugin, hook, hookimpl(run))
    record = PluginRecord(name=f"{owner}#on:{name}:{next(_COUNTER)}", source="runtime", origin=owner)
    if not host.register(plugin, record):
        raise ValueError(f"Cannot subscribe to {event_name!r}: {record.error}")

    def unsubscribe() -> None:
        if record in host.records:
            host.unregister(record.name)
            host.records.remove(record)

    return unsubscribe


def _positional_count(handler: Callable[..., Any]) -> int:
    try:
        parameters = inspect.signature(handler).parameters.values()
    except (TypeError, ValueError):
        return 2
    if any(p.kind is p.VAR_POSITIONAL for p in parameters):
        return 2
    return sum(1 for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
