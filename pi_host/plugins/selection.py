"""Building the plugin host for a run: load every plugin source in the documented order.

Deliberately free of pydantic and httpx so that ``pi --help`` and ``pi plugins`` stay fast.
"""

from __future__ import annotations

import os
from typing import Any

from pi_host.plugins.dispatch import PluginHost, PluginRecord
from pi_host.plugins.loading import LoadOptions, disabled_from_env, load_plugins


def build_host(
    cwd: str,
    settings: dict[str, Any],
    *,
    extension_paths: tuple[str, ...] = (),
    builtins_only: bool | None = None,
    strict: bool = False,
    discover: bool = True,
    extra_plugins: list[Any] | tuple[Any, ...] = (),
    on_error: Any = None,
) -> PluginHost:
    """Load every plugin source in the documented order."""
    host = PluginHost(strict=strict)
    if on_error is not None:
        host.on_error(on_error)
    disabled = set(disabled_from_env())
    configured = settings.get("disabledPlugins")
    if isinstance(configured, list):
        disabled.update(str(name) for name in configured)
    if builtins_only is None:
        builtins_only = os.environ.get("PI_HOST_NO_PLUGINS", "") not in ("", "0")
    options = LoadOptions(
        cwd=cwd,
        extension_paths=tuple(extension_paths),
        disabled=frozenset(disabled),
        builtins_only=builtins_only,
        discover_files=discover,
    )
    load_plugins(host, options)
    for index, plugin in enumerate(extra_plugins):
        name = getattr(plugin, "__name__", None) or f"{type(plugin).__name__}-{index}"
        host.register(plugin, PluginRecord(name=name, source="sdk", origin=name))
    return host
