"""An extension's event subscriptions as pi-host hooks: at load (``on_<event>`` on its plugin
object) and later (``pi.on`` after start-up, through the session's ``ctx.on``)."""

from __future__ import annotations

from typing import Any

from pi_host import hookimpl
from pi_host.plugins.hookspecs import specs
from pi_ts_bridge.extension import BridgeRuntime, Extension

_HOOKS = specs()


def add_event_hook(runtime: BridgeRuntime, extension: Extension, event: str, late: bool = False) -> None:
    """Route pi-host's ``on_<event>`` to the extension (``late``: ``pi.on`` after start-up)."""
    name, hook = event, f"on_{event}"
    if hook not in _HOOKS or event == "event":
        runtime.note_unsupported(extension, f"the event {event!r}")
        return
    providers = extension.snapshot.get("providers") if event == "session_start" else None

    async def handler(event: dict[str, Any], ctx: Any) -> Any:  # pluggy matches the spec's names
        if providers:
            _register_providers(runtime, extension, providers, ctx)
        return await runtime.emit(extension, name, event, ctx)

    if not late:
        setattr(extension.plugin, hook, hookimpl(handler))
        return
    ctx = runtime.ctx
    if ctx is not None and hasattr(ctx, "on"):
        handler.__module__ = extension.name  # failures are named after the extension
        ctx.on(event, handler)


def _register_providers(runtime: BridgeRuntime, extension: Extension, providers: list[Any], ctx: Any) -> None:
    """``pi.registerProvider`` calls of the factory, applied when the session starts (pi applies
    them once its runner is up, before ``session_start``)."""
    for name, config in providers:
        try:
            ctx.register_provider(name, config)
        except Exception as exc:
            runtime.host.report(extension.name, "registerProvider", f"{name}: {exc}")
    providers.clear()
