"""``/reload`` and plugins installed by reference (pip's editable installs, ``pi install ./folder``).

Reloading loads plugins again, but Python imports a module once: a plugin whose source changed
would come back unchanged. So before plugins load again, :func:`forget_changed_modules` drops from
``sys.modules`` the modules of each editable plugin distribution in which a file changed since it
was imported, and the next import reads the new source. Only editable distributions with
``pi_host`` entry points are considered: built-ins and ordinary installs never change under a
running process, and re-importing them would only cost time.

A distribution's modules are dropped together (not only the changed file), so the package never
mixes old and new objects. Byte-code is compared with the source by its mtime in whole seconds
and its size, which an edit of the same length within a second defeats; a cached ``.pyc`` older
than its changed source is removed first so that the source is compiled again.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
import time

GROUP = "pi_host"
HOST_DISTRIBUTION = "pi-host"
_STARTED = time.time_ns()
"""When nothing better is known, a module counts as imported no later than this."""
_imported_at: dict[str, int] = {}
"""When a reload last dropped each module (it was imported again right after)."""


def editable_projects() -> dict[str, str]:
    """The folders of the editable distributions that provide ``pi_host`` entry points, by name."""
    from importlib.metadata import distributions
    from urllib.parse import unquote, urlparse  # here: the module is imported on every start

    found: dict[str, str] = {}
    for dist in distributions():
        try:
            text = dist.read_text("direct_url.json")
            if not text:
                continue
            data = json.loads(text)
            if not (data.get("dir_info") or {}).get("editable"):
                continue
            name = dist.metadata["Name"] or ""
            if name.lower() == HOST_DISTRIBUTION or not any(ep.group == GROUP for ep in dist.entry_points):
                continue
            url = urlparse(data["url"])
        except Exception:  # unreadable metadata: not a plugin to reload
            continue
        if url.scheme == "file" and name:
            found.setdefault(name, os.path.realpath(unquote(url.path)))
    return found


def _modules_in(folder: str) -> list[tuple[str, str]]:
    """(module name, source file) of the imported modules whose file is inside ``folder`` (not
    in an environment kept there: a project's own ``.venv`` holds other distributions)."""
    prefix = folder.rstrip(os.sep) + os.sep
    found = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or not path.endswith(".py"):
            continue
        real = os.path.realpath(path)
        if real.startswith(prefix) and "site-packages" not in real[len(prefix) :].split(os.sep):
            found.append((name, real))
    return found


def _mtime(path: str | None) -> int | None:
    try:
        return os.stat(path).st_mtime_ns if path else None
    except OSError:
        return None


def _imported(name: str, path: str) -> int:
    """When module ``name`` was compiled or imported, at the latest: the last reload's drop, else
    its ``.pyc`` (written when the source was compiled: an import of changed source rewrites
    it), else when this module was first imported (before any reload)."""
    if name in _imported_at:
        return _imported_at[name]
    compiled = _mtime(importlib.util.cache_from_source(path))
    return compiled if compiled is not None else _STARTED


def forget_changed_modules() -> list[str]:
    """Drop the imported modules of each editable plugin distribution that changed since they
    were imported (see the module doc); the names of those distributions."""
    now = time.time_ns()
    changed_dists = []
    for dist, folder in editable_projects().items():
        modules = _modules_in(folder)
        changed = [
            (name, path)
            for name, path in modules
            if (_mtime(path) or 0) > _imported(name, path) or _mtime(path) is None
        ]
        if not changed:
            continue
        changed_dists.append(dist)
        for _name, path in changed:
            cached = importlib.util.cache_from_source(path)
            source, compiled = _mtime(path), _mtime(cached)
            if source is not None and compiled is not None and source >= compiled:
                try:
                    os.remove(cached)
                except OSError:
                    pass
        for name, _path in modules:
            sys.modules.pop(name, None)
            _imported_at[name] = now
    if changed_dists:
        importlib.invalidate_caches()
    return changed_dists
