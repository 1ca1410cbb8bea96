"""The catalog's providers from the installed plugins, loaded the way the CLI loads them but
without the agent dir: built-in and installed entry points only (no global or project files,
so no trust question), each failure isolated and reported on the plugin host."""

from __future__ import annotations

from pi_host.config import paths
from pi_host.config.models import ProviderApi, ProviderInfo
from pi_host.plugins.dispatch import PluginHost
from pi_host.plugins.loading import find_plugins, load, normalise
from pi_host.plugins.selection import disabled_from_env


def provider_registrations() -> tuple[list[ProviderApi], list[ProviderInfo]]:
    """What the installed plugins' ``register_providers`` and ``register_models`` return."""
    host = PluginHost()
    disabled = {normalise(name) for name in disabled_from_env()}
    found = find_plugins(cache_dir=paths.cache_dir(), builtins_only=False, global_dir=None, project_dir=None)
    for source in ("builtin", "installed"):
        for candidate in found[source]:
            load(host, candidate, disabled)
    return host.collect("register_providers"), host.collect("register_models")
