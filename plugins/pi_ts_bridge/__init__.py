"""pi's TypeScript and JavaScript extensions in pi-host (docs/typescript-extensions.md).

This module stays tiny: it is imported with every built-in, and nothing else of the bridge (no
Node process, no JSON machinery) loads until a ``.ts``/``.js`` extension is configured.
"""

from __future__ import annotations

from typing import Any

from pi_host import hookimpl


@hookimpl
def load_script_extension(host: Any, record: Any) -> Any:
    if _help_only():
        return _Unloaded()  # `pi --help` starts no Node (the extensions' own flags are not listed)
    from pi_ts_bridge.plugin import load_extension

    return load_extension(host, record)


class _Unloaded:
    """An extension left unloaded: no hooks."""


def _help_only() -> bool:
    """``pi --help`` / ``-h`` (before any ``--``), as the CLI reads it."""
    import sys

    for token in sys.argv[1:]:
        if token == "--":
            return False
        if token in ("-h", "--help"):
            return True
    return False


@hookimpl
def register_settings_plugins(settings_path: str, problems: list[str]) -> list[str]:
    """pi's npm packages that ``pi install npm:...`` recorded for this settings file's scope (the
    user's, or a trusted project's manifest) and installed into pi-host's npm prefix: they load
    as extensions of that scope. Without a manifest this costs one ``stat``."""
    import os

    base = os.path.dirname(settings_path)
    manifest = os.path.join(base, "pi-host-packages.json")
    if not os.path.exists(manifest):
        return []
    from pi_ts_bridge.sources import recorded_npm_packages

    return recorded_npm_packages(manifest, problems)


@hookimpl(trylast=True)
def on_session_shutdown(event: Any, ctx: Any) -> None:
    """After the extensions saw ``session_shutdown``: a quit or a reload ends this runtime's bridge
    (a reload loads the extensions again in a new one)."""
    import sys

    runtimes = sys.modules.get("pi_ts_bridge.runtimes")
    if runtimes is None:  # no bridge was ever started in this process (and none is imported)
        return
    session = getattr(ctx, "session", None)
    host = getattr(session, "host", None)
    runtime = runtimes.RUNTIMES.get(host) if host is not None else None
    if runtime is None:
        return
    if runtime.ui_backlog and type(session.ui).__name__ != "HeadlessUI":  # not shown yet: now
        waiting, runtime.ui_backlog = runtime.ui_backlog, []
        for method, args in waiting:
            getattr(session.ui, method)(*args)
    if event.get("reason") in ("quit", "reload"):
        runtime.close()
