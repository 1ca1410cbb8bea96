"""Finding plugins and importing them, isolated, in the documented load order.

1. built-ins: entry points of the ``pi_host`` group shipped by the pi-host distribution;
2. installed third-party plugins: the group's other entry points, sorted by entry-point name;
3. global files: ``<agent dir>/extensions/*.py`` (and packages with ``__init__.py``), by name;
4. project files: ``<cwd>/.pi/extensions/*.py``, by name (imported only for a trusted project);
5. ``-e`` paths, in the order given.
pi's ``.ts``/``.js`` extensions found there load through the ``load_script_extension`` hook.

Settings files name more (``extensions``, ``packages``: :func:`named_candidate`); they load after
the files of their scope (:mod:`pi_host.plugins.selection`).

:func:`find_plugins` lists them without importing anything; :func:`load` imports one and
registers it. Scanning installed distributions is slow, so the entry-point list is cached in
``<cache dir>/entry-points-<key>.json``, keyed by each ``sys.path`` directory's ``.dist-info``
names and times (an install changes them): environments sharing a cache dir keep a file each.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from pi_host.plugins.dispatch import PluginHost, PluginRecord

GROUP = "pi_host"
HOST_DISTRIBUTION = "pi-host"
CACHE_VERSION = 1
SCRIPT_SUFFIXES = (".ts", ".mts", ".cts", ".js", ".mjs", ".cjs")  # pi's extensions, and their folders':
SCRIPT_ENTRIES = ("index.ts", "index.js", "package.json")


def normalise(name: str) -> str:
    """A distribution or plugin name as packaging compares them (``My_Tools`` = ``my-tools``)."""
    return name.lower().replace("_", "-").replace(".", "-")


@dataclass
class EntryPointInfo:
    name: str
    value: str
    dist: str
    version: str

    @property
    def builtin(self) -> bool:
        return normalise(self.dist) == HOST_DISTRIBUTION


class Candidate:
    """A plugin that could load: its record, how to import it, its distribution (entry points)."""

    def __init__(self, record: PluginRecord, load: Callable[[], Any], dist: str = "") -> None:
        self.record, self.load, self.dist = record, load, dist
        self.script = record.source not in ("builtin", "installed") and is_script(record.origin)


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


KEEP_ENTRY_POINT_FILES = 8


def _cache_file(cache_dir: str, fingerprint: list[Any]) -> str:
    import zlib  # a collision only costs a scan: the file holds its fingerprint, compared on read

    return os.path.join(cache_dir, f"entry-points-{zlib.crc32(json.dumps(fingerprint).encode()):08x}.json")


def _prune_cache_files(cache_dir: str) -> None:
    """Keep the newest entry-point files (earlier versions' single ``entry-points.json`` too)."""
    try:
        files = [
            e for e in os.scandir(cache_dir) if e.name.startswith("entry-points") and e.name[-5:] == ".json"
        ]
        for old in sorted(files, key=lambda e: e.stat().st_mtime_ns)[:-KEEP_ENTRY_POINT_FILES]:
            os.unlink(old.path)
    except OSError:
        pass


def entry_points(cache_dir: str | None) -> list[EntryPointInfo]:
    """The ``pi_host`` entry points, from the cache in ``cache_dir`` when these installed
    distributions were scanned before (None: always scan)."""
    fingerprint = _fingerprint()
    cache_file = _cache_file(cache_dir, fingerprint) if cache_dir else None
    if cache_file:
        try:
            with open(cache_file, encoding="utf-8") as handle:
                cached = json.load(handle)
            if cached.get("fingerprint") == fingerprint:
                return [EntryPointInfo(**item) for item in cached["entryPoints"]]
        except (OSError, ValueError, KeyError, TypeError):
            pass
    found = _scan_entry_points()
    if cache_file:
        try:
            os.makedirs(os.path.dirname(cache_file), exist_ok=True)
            tmp = f"{cache_file}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as handle:
                json.dump({"fingerprint": fingerprint, "entryPoints": [vars(e) for e in found]}, handle)
            os.replace(tmp, cache_file)
        except OSError:
            pass  # a read-only cache dir only costs speed
        _prune_cache_files(os.path.dirname(cache_file))
    return found


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
        if search is None:
            # Compiled from the text each time: bytecode is checked by mtime (seconds) and size,
            # so an edit of the same length within the second would reload the old code.
            with open(target, "rb") as handle:
                exec(compile(handle.read(), target, "exec"), module.__dict__)
        else:
            spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module


def dir_plugins(directory: str) -> list[str]:
    """The plugin files and packages directly inside ``directory``, by name."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    found = []
    for name in names:
        if name.startswith((".", "_")):
            continue
        full = os.path.join(directory, name)
        if name.endswith((".py", *SCRIPT_SUFFIXES)) and os.path.isfile(full):
            found.append(full)
        elif any(os.path.isfile(os.path.join(full, n)) for n in ("__init__.py", *SCRIPT_ENTRIES)):
            found.append(full)
    return found


def is_script(path: str) -> bool:
    """A TypeScript/JavaScript extension file, or a folder of one (no ``__init__.py``)."""
    if os.path.isabs(path) and os.path.isdir(path):
        return not os.path.isfile(os.path.join(path, "__init__.py"))
    return os.path.isabs(path) and path.endswith(SCRIPT_SUFFIXES)


def find_plugins(
    *,
    cache_dir: str | None,
    builtins_only: bool,
    global_dir: str | None,
    project_dir: str | None,
    extension_paths: tuple[str, ...] = (),
) -> dict[str, list[Candidate]]:
    """Every plugin source's candidates by source, in load order, nothing imported.
    ``global_dir`` / ``project_dir`` are the extension directories (None: not searched)."""
    found: dict[str, list[Candidate]] = {
        "builtin": [],
        "installed": [],
        "global": [],
        "project": [],
        "cli": [],
    }
    eps = entry_points(cache_dir)
    ordered = sorted((e for e in eps if e.builtin), key=lambda e: e.name) + sorted(
        (e for e in eps if not e.builtin), key=lambda e: (e.name, e.dist)
    )
    for ep in ordered:
        if builtins_only and not ep.builtin:
            continue
        source = "builtin" if ep.builtin else "installed"
        record = PluginRecord(name=ep.name, source=source, origin=ep.dist, version=ep.version)
        found[source].append(Candidate(record, lambda ep=ep: _load_entry_point(ep), dist=ep.dist))
    taken: set[str] = {c.record.name for group in found.values() for c in group}
    files = [] if builtins_only else [("global", p) for p in dir_plugins(global_dir or "") if global_dir]
    if not builtins_only and project_dir:
        files += [("project", p) for p in dir_plugins(project_dir)]
    files += [("cli", p) for p in extension_paths]
    for source, path in files:
        found[source].append(named_candidate(path, source, taken))
    return found


def named_candidate(target: str, source: str, taken: set[str], module: bool = False) -> Candidate:
    """A plugin file or package folder, or (``module``) an importable module's dotted name."""
    if not module:
        name = _unique(os.path.splitext(os.path.basename(target.rstrip(os.sep)))[0], taken)
        origin = os.path.abspath(os.path.expanduser(target))
        return Candidate(PluginRecord(name, source, origin), lambda: load_file_plugin(target))
    record = PluginRecord(_unique(target, taken), source, origin=target)
    return Candidate(record, lambda: importlib.import_module(target))


def _load_script(host: PluginHost, record: PluginRecord) -> Any:
    plugin = host.pm.hook.load_script_extension(host=host, record=record)
    if plugin is None:
        raise ImportError("a TypeScript/JavaScript extension: no plugin loads those (ts-bridge is off)")
    return plugin


def _unique(name: str, taken: set[str]) -> str:
    unique, index = name, 1
    while unique in taken:
        unique, index = f"{name}:{index}", index + 1
    taken.add(unique)
    return unique


def is_named(candidate: Candidate, names: Collection[str]) -> bool:
    """Whether ``names`` (normalised) name this plugin or its distribution."""
    return normalise(candidate.record.name) in names or bool(
        candidate.dist and normalise(candidate.dist) in names
    )


def load(host: PluginHost, candidate: Candidate, disabled: Collection[str] = ()) -> bool:
    """Import and register one candidate unless ``disabled`` names it; failures are isolated."""
    record = candidate.record
    if is_named(candidate, disabled):
        record.disabled = True
        host.records.append(record)
        return False
    started = time.perf_counter()
    try:
        plugin = _load_script(host, record) if candidate.script else candidate.load()
    except BaseException as exc:  # SyntaxError, ImportError, SystemExit from a broken plugin
        if isinstance(exc, KeyboardInterrupt):
            raise
        record.import_ms = (time.perf_counter() - started) * 1000
        record.error = f"{type(exc).__name__}: {exc}"
        host.records.append(record)
        host.report(record.name, "load", record.error, origin=record.origin)
        return False
    record.import_ms = (time.perf_counter() - started) * 1000
    if not record.version:
        record.version = str(getattr(plugin, "__version__", "") or "")
    return host.register(plugin, record)
