"""Finding and importing plugins in the documented load order.

1. built-ins: entry points of the ``pi_host`` group shipped by the pi-host distribution;
2. installed third-party plugins: the group's other entry points, sorted by entry-point name;
3. global files: ``<agent dir>/extensions/*.py`` (and packages with ``__init__.py``), by name;
4. project files: ``<cwd>/.pi/extensions/*.py``, by name (only when the project is trusted);
5. ``-e`` paths, in the order given.

Scanning installed distributions is slow, so the entry-point list is cached in
``<cache dir>/entry-points.json`` and rebuilt whenever a ``sys.path`` directory changes (installing
or removing a distribution touches its site-packages directory).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pi_host.config import paths
from pi_host.plugins.dispatch import PluginHost, PluginRecord

GROUP = "pi_host"
HOST_DISTRIBUTION = "pi-host"
CACHE_VERSION = 1


@dataclass
class EntryPointInfo:
    name: str
    value: str
    dist: str
    version: str

    @property
    def builtin(self) -> bool:
        return _normalise(self.dist) == _normalise(HOST_DISTRIBUTION)


def _normalise(dist_name: str) -> str:
    return dist_name.lower().replace("_", "-").replace(".", "-")


def _fingerprint() -> list[Any]:
    """The installed distributions, cheaply: each ``*.dist-info``/``*.egg-info`` on sys.path with
    its mtime (pip rewrites the directory on install, upgrade and uninstall)."""
    stamp: list[Any] = [sys.version, CACHE_VERSION]
    for entry in sys.path:
        try:
            with os.scandir(entry or ".") as listing:
                infos = sorted(
                    (item.name, item.stat().st_mtime_ns)
                    for item in listing
                    if item.name.endswith((".dist-info", ".egg-info"))
                )
        except OSError:
            continue
        if infos:
            stamp.append([entry, infos])
    return json.loads(json.dumps(stamp))


def _scan_entry_points() -> list[EntryPointInfo]:
    from importlib.metadata import distributions

    found: dict[tuple[str, str], EntryPointInfo] = {}
    for dist in distributions():
        try:
            eps = dist.entry_points
            dist_name = dist.metadata["Name"] or ""
            version = dist.version or ""
        except Exception:
            continue
        for ep in eps:
            if ep.group == GROUP:
                # The first distribution on sys.path wins, as importlib itself resolves it.
                found.setdefault((dist_name, ep.name), EntryPointInfo(ep.name, ep.value, dist_name, version))
    return list(found.values())


def entry_points(use_cache: bool = True) -> list[EntryPointInfo]:
    """The ``pi_host`` entry points, from the cache when installed distributions did not change."""
    cache_file = os.path.join(paths.cache_dir(), "entry-points.json")
    fingerprint = _fingerprint()
    if use_cache:
        try:
            with open(cache_file, encoding="utf-8") as handle:
                cached = json.load(handle)
            if cached.get("fingerprint") == fingerprint:
                return [EntryPointInfo(**item) for item in cached["entryPoints"]]
        except (OSError, ValueError, KeyError, TypeError):
            pass
    found = _scan_entry_points()
    if use_cache:
        try:
            os.makedirs(os.path.dirname(cache_file), exist_ok=True)
            tmp = f"{cache_file}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as handle:
                json.dump({"fingerprint": fingerprint, "entryPoints": [vars(e) for e in found]}, handle)
            os.replace(tmp, cache_file)
        except OSError:
            pass  # a read-only cache dir only costs speed
    return found


def ordered_entry_points(eps: Iterable[EntryPointInfo]) -> list[EntryPointInfo]:
    eps = list(eps)
    builtins = sorted((e for e in eps if e.builtin), key=lambda e: e.name)
    others = sorted((e for e in eps if not e.builtin), key=lambda e: (e.name, e.dist))
    return builtins + others


def _load_entry_point(ep: EntryPointInfo) -> Any:
    module_name, _, attr = ep.value.partition(":")
    obj: Any = importlib.import_module(module_name.strip())
    for part in attr.strip().split(".") if attr.strip() else ():
        obj = getattr(obj, part)
    return obj


def load_file_plugin(path: str) -> Any:
    """Import a plugin from a ``.py`` file or a package directory under a private module name."""
    path = os.path.abspath(os.path.expanduser(path))
    if os.path.isdir(path):
        init = os.path.join(path, "__init__.py")
        if not os.path.isfile(init):
            raise ImportError(f"{path} is a directory without __init__.py")
        target, search = init, [path]
    elif os.path.isfile(path):
        target, search = path, None
    else:
        raise FileNotFoundError(f"no such plugin file: {path}")
    stem = os.path.splitext(os.path.basename(path.rstrip(os.sep)))[0]
    module_name = f"pi_host_ext_{abs(hash(path)):x}_{stem}".replace("-", "_")
    spec = importlib.util.spec_from_file_location(module_name, target, submodule_search_locations=search)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module


def _dir_plugins(directory: str) -> list[str]:
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    found = []
    for name in names:
        if name.startswith((".", "_")):
            continue
        full = os.path.join(directory, name)
        if name.endswith(".py") and os.path.isfile(full):
            found.append(full)
        elif os.path.isfile(os.path.join(full, "__init__.py")):
            found.append(full)
    return found


@dataclass
class LoadOptions:
    cwd: str = "."
    extension_paths: tuple[str, ...] = ()
    """``-e`` paths, loaded last in this order."""
    disabled: frozenset[str] = frozenset()
    builtins_only: bool = False
    """``PI_HOST_NO_PLUGINS=1``: only the built-ins."""
    project_trusted: bool = True
    discover_files: bool = True
    use_cache: bool = True


def disabled_from_env() -> frozenset[str]:
    value = os.environ.get("PI_HOST_DISABLE_PLUGINS", "")
    return frozenset(part.strip() for part in value.split(",") if part.strip())


def load_plugins(host: PluginHost, options: LoadOptions) -> PluginHost:
    """Import and register every plugin source in load order. Failures are isolated."""
    for ep in ordered_entry_points(entry_points(options.use_cache)):
        if options.builtins_only and not ep.builtin:
            continue
        record = PluginRecord(
            name=ep.name,
            source="builtin" if ep.builtin else "installed",
            origin=ep.dist,
            version=ep.version,
        )
        _import_and_register(host, record, options, lambda ep=ep: _load_entry_point(ep))
    if options.builtins_only or not options.discover_files:
        files: list[tuple[str, str]] = []
    else:
        files = [("global", p) for p in _dir_plugins(os.path.join(paths.agent_dir(), "extensions"))]
        if options.project_trusted:
            files += [("project", p) for p in _dir_plugins(os.path.join(options.cwd, ".pi", "extensions"))]
    files += [("cli", p) for p in options.extension_paths]
    for source, path in files:
        name = os.path.splitext(os.path.basename(path.rstrip(os.sep)))[0]
        record = PluginRecord(name=_unique_name(host, name), source=source, origin=os.path.abspath(path))
        _import_and_register(host, record, options, lambda path=path: load_file_plugin(path))
    return host


def _unique_name(host: PluginHost, name: str) -> str:
    taken = {r.name for r in host.records}
    if name not in taken:
        return name
    index = 1
    while f"{name}:{index}" in taken:
        index += 1
    return f"{name}:{index}"


def _import_and_register(host: PluginHost, record: PluginRecord, options: LoadOptions, load: Any) -> None:
    if record.name in options.disabled:
        record.disabled = True
        host.records.append(record)
        return
    started = time.perf_counter()
    try:
        plugin = load()
    except BaseException as exc:  # SyntaxError, ImportError, SystemExit from a broken plugin
        if isinstance(exc, KeyboardInterrupt):
            raise
        record.import_ms = (time.perf_counter() - started) * 1000
        record.error = f"{type(exc).__name__}: {exc}"
        host.records.append(record)
        host.report(record.name, "load", record.error, origin=record.origin)
        return
    record.import_ms = (time.perf_counter() - started) * 1000
    if not record.version:
        record.version = str(getattr(plugin, "__version__", "") or "")
    host.register(plugin, record)
