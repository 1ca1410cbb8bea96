"""Sparing a run pydantic's own plugin scan when no installed distribution has a pydantic plugin.

The first time pydantic builds a model it imports ``importlib.metadata`` and reads the entry
points of every installed distribution, looking for the ``pydantic`` group: about 20 ms of a
``-p`` run, paid for nothing on almost every machine. Reading the ``entry_points.txt`` files
directly answers the same question in a fraction of that. Only when no distribution declares the
group does pydantic's loader module get replaced by one that reports no plugins; any other name a
future pydantic asks of that module brings the real one back, so the shortcut can only be lost,
never break a run.
"""

from __future__ import annotations

import importlib
import os
import sys
import types
from typing import Any

LOADER = "pydantic.plugin._loader"


def _declares_pydantic_plugins() -> bool:
    for entry in sys.path:
        try:
            listing = os.scandir(entry or ".")
        except OSError:
            continue
        with listing:
            for item in listing:
                if not item.name.endswith((".dist-info", ".egg-info")):
                    continue
                try:
                    with open(os.path.join(item.path, "entry_points.txt"), encoding="utf-8") as handle:
                        if "[pydantic]" in handle.read():
                            return True
                except OSError:
                    continue
    return False


class _NoPlugins(types.ModuleType):
    def get_plugins(self) -> tuple[()]:
        return ()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # the import system probing (``__path__``...), not pydantic
            raise AttributeError(name)
        sys.modules.pop(LOADER, None)
        return getattr(importlib.import_module(LOADER), name)


def skip_scan_when_none_installed() -> bool:
    """Install the no-plugin loader unless pydantic's loader already ran, plugins are installed or
    ``PYDANTIC_DISABLE_PLUGINS`` is set (pydantic then handles it itself). True when installed."""
    if LOADER in sys.modules or "PYDANTIC_DISABLE_PLUGINS" in os.environ or _declares_pydantic_plugins():
        return False
    sys.modules[LOADER] = _NoPlugins(LOADER)
    return True
