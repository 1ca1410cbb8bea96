"""The modules a run imports, read from one file instead of one search per module (issue 36).

A ``-p`` run imports ~310 modules from ``.py`` files: pi-host's, its libraries' and the standard
library's. For each one, Python's path finder walks ``sys.path`` and its directory caches, and the
source loader stats the source, opens and checks its ``__pycache__`` file and unmarshals it. The
search and the checks, pure-Python ``importlib`` code, cost about as much as unmarshalling (~30 ms
of a ``-p`` run here). This module keeps the compiled code of the modules runs imported in one
file, ``<cache dir>/modules-v1-<python tag>.marshal`` (an index, then each module's code, read
with one ``pread`` when it is imported, so the file is never held in memory), and puts a finder
first on ``sys.meta_path`` that serves them from it:

* an entry is used only while its source file has the size and modification time it had when the
  code was stored (the check ``__pycache__`` makes) and it would still be found there: the
  ``sys.path`` entries the runs share are in the same order and unchanged (a new file changes a
  directory's time), an entry only this run has (``python -m`` adds the working directory) holds
  no file of that top-level name, and the module's own directory is unchanged. Anything else
  falls through to the normal import system;
* a module gets the spec, loader class and attributes the normal search gives it
  (``SourceFileLoader``, ``__file__``, ``__cached__``, ``__path__``), so ``inspect``,
  ``importlib.resources`` and tracebacks behave the same;
* at exit, when the run imported a module the file did not serve, the file is rewritten
  atomically with what this run and the earlier ones imported (bounded by ``MAX_MODULES``).

Only modules the standard source loader loads from a ``.py`` file are kept.
``PI_HOST_NO_MODULE_CACHE=1`` turns this off; ``PI_HOST_NO_CODE_CACHE=1`` turns it off together
with the compiled-text cache (:mod:`pi_host.cli.code_cache`).
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sys
from importlib.machinery import ModuleSpec, SourceFileLoader

MAX_MODULES = 3000
"""Beyond this the file keeps only the modules of the run that writes it."""

FORMAT = 1


def _stat_key(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


class CachedSourceLoader(SourceFileLoader):
    """The standard source loader, reading the module's code from the cache file."""

    def __init__(self, fullname: str, path: str, cache: ModuleCache) -> None:
        super().__init__(fullname, path)
        self._cache = cache

    def get_code(self, fullname: str) -> object:
        code = self._cache.code(fullname) if fullname == self.name else None
        return super().get_code(fullname) if code is None else code


class ModuleCache:
    """The finder on ``sys.meta_path``, and the file it reads from and writes back at exit."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.modules: dict[str, tuple] = {}  # name -> (origin, is package, stat key, offset, size)
        self.served: set[str] = set()
        self.preloaded = set(sys.modules)  # imported before the finder: never asked for
        self._stored_path: tuple[str, ...] = ()
        self._path_dirs: dict[str, object] = {}
        self._path: tuple[list[str], set[str] | None] | None = None
        self._dirs_known: dict[str, object] = {}
        self._dirs: dict[str, bool] = {}
        self._fd = -1
        self._base = 0
        with contextlib.suppress(OSError, EOFError, ValueError, TypeError, KeyError, AttributeError):
            self._open()

    def _open(self) -> None:
        fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        size = int.from_bytes(os.pread(fd, 8, 0), "little")
        index = marshal.loads(os.pread(fd, size, 8)) if size else None
        if not (
            isinstance(index, dict)
            and index.get("format") == FORMAT
            and isinstance(index.get("modules"), dict)
            and isinstance(index.get("dirs"), dict)
            and isinstance(index.get("path_dirs"), dict)
        ):
            os.close(fd)
            return
        self._stored_path, self._path_dirs = tuple(index["sys_path"]), dict(index["path_dirs"])
        self._fd, self._base = fd, 8 + size
        self.modules, self._dirs_known = index["modules"], index["dirs"]

    def _path_state(self) -> tuple[list[str], set[str] | None]:
        """``sys.path`` now, and the top-level names the file must not serve (None: none at all)."""
        state = self._path
        if state is None or sys.path != state[0]:
            listing = list(sys.path)
            state = self._path = (listing, self._hidden_names(listing))
        return state

    def _hidden_names(self, listing: list[str]) -> set[str] | None:
        """The top-level names ``listing`` may find elsewhere than where they were stored, or
        None when it may find any stored module elsewhere.

        The entries both runs have must be in the same order and unchanged; an entry only this
        run has (``python -m`` puts the working directory first; ``""`` is always one, it is
        whatever directory the process is in) hides the top-level names of the files it holds,
        which then load the normal way."""
        stored = set(self._stored_path) - {""}
        current = set(listing)
        common = [d for d in listing if d in stored]
        if common != [d for d in self._stored_path if d in current and d]:
            return None
        if any(_stat_key(d) != self._path_dirs.get(d) for d in common):
            return None
        hidden: set[str] = set()
        for directory in current - stored:
            try:
                names = os.listdir(directory or ".")
            except FileNotFoundError:
                continue
            except OSError:  # a zip file, or unreadable: it could hold anything
                return None
            hidden.update(name.partition(".")[0] for name in names)
        return hidden

    def _dir_unchanged(self, directory: str) -> bool:
        known = self._dirs.get(directory)
        if known is None:
            known = self._dirs[directory] = _stat_key(directory) == self._dirs_known.get(directory)
        return known

    def _blob(self, name: str) -> bytes | None:
        entry = self.modules.get(name)
        if entry is None or self._fd < 0:
            return None
        try:
            blob = os.pread(self._fd, entry[4], self._base + entry[3])
        except OSError:
            return None
        return blob if len(blob) == entry[4] else None

    def code(self, name: str) -> object:
        """The module's code from the file, or None (the loader then reads it the normal way)."""
        blob = self._blob(name)
        if blob is None:
            return None
        try:
            return marshal.loads(blob)
        except (EOFError, ValueError, TypeError):
            return None

    # -- the finder ---------------------------------------------------------------------------

    def find_spec(self, name: str, path: object = None, target: object = None) -> ModuleSpec | None:
        entry = self.modules.get(name)
        if entry is None or self._fd < 0:
            return None
        try:
            origin, is_package, key, _offset, _size = entry
            found = self._still_found(name, origin, is_package, key, path)
        except Exception:  # (a damaged file, an odd sys.path entry: the normal way, never an error)
            return None
        if not found:
            return None
        spec = ModuleSpec(name, CachedSourceLoader(name, origin, self), origin=origin, is_package=is_package)
        spec.has_location = True
        if is_package:
            spec.submodule_search_locations = [os.path.dirname(origin)]
        self.served.add(name)
        return spec

    def _still_found(self, name: str, origin: str, is_package: bool, key: object, path: object) -> bool:
        """Whether the normal search would find the stored module's file now."""
        where = _search_dir(origin, is_package)
        if path is None:
            listing, hidden = self._path_state()
            if hidden is None or name in hidden or where not in listing:
                return False
        elif where not in path:  # type: ignore[operator]
            return False
        return self._dir_unchanged(where) and _stat_key(origin) == key

    def invalidate_caches(self) -> None:
        self._dirs.clear()

    # -- writing back ---------------------------------------------------------------------------

    def save(self) -> None:
        """Rewrite the file when this run imported a module it did not serve."""
        fresh = self._imported_now()
        if not fresh:
            return
        kept: dict[str, tuple] = {}
        if len(self.modules) + len(fresh) <= MAX_MODULES:
            for name, entry in self.modules.items():
                blob = None if name in fresh else self._blob(name)
                if blob is not None:
                    kept[name] = (*entry[:3], blob)
        kept.update(fresh)
        self._write(kept)

    def _write(self, entries: dict[str, tuple]) -> None:
        modules, blobs, offset = {}, [], 0
        for name, (origin, is_package, key, blob) in entries.items():
            modules[name] = (origin, is_package, key, offset, len(blob))
            blobs.append(blob)
            offset += len(blob)
        dirs = {_search_dir(origin, package) for origin, package, *_ in entries.values()}
        index = marshal.dumps(
            {
                "format": FORMAT,
                "sys_path": tuple(sys.path),
                "path_dirs": {d: _stat_key(d) for d in sys.path if d},
                "dirs": {d: _stat_key(d) for d in dirs},
                "modules": modules,
            }
        )
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(tmp, "wb") as handle:
                handle.write(len(index).to_bytes(8, "little"))
                handle.write(index)
                handle.writelines(blobs)
            os.replace(tmp, self.path)
        except (OSError, ValueError):
            with contextlib.suppress(OSError):
                os.unlink(tmp)

    def _imported_now(self) -> dict[str, tuple]:
        """The modules of this run the file did not serve, as entries."""
        fresh = {}
        for name, module in list(sys.modules.items()):
            if name in self.served or name in self.preloaded:
                continue
            spec = getattr(module, "__spec__", None)
            loader = getattr(spec, "loader", None)
            origin = getattr(spec, "origin", None)
            if (
                type(loader) is not SourceFileLoader
                or not isinstance(origin, str)
                or not origin.endswith(".py")
            ):
                continue
            is_package = spec.submodule_search_locations is not None
            if is_package and list(spec.submodule_search_locations) != [os.path.dirname(origin)]:
                continue
            if not _searchable(name, origin, is_package):
                continue
            key = _stat_key(origin)
            if key is None:
                continue
            try:
                code = loader.get_code(name)
            except (ImportError, OSError, SyntaxError, ValueError):
                continue
            if code is not None:
                fresh[name] = (origin, is_package, key, marshal.dumps(code))
        return fresh


def _search_dir(origin: str, is_package: bool) -> str:
    """The folder an import searches to find this module (a package's parent folder)."""
    directory = os.path.dirname(origin)
    return os.path.dirname(directory) if is_package else directory


def _searchable(name: str, origin: str, is_package: bool) -> bool:
    """Whether an import of ``name`` searches where the module is: its folder is on ``sys.path``
    (a top-level name) or in its package's ``__path__``. A module loaded from a file by location
    (an extension, a plugin given by path) is never asked for by name, so never kept."""
    where = _search_dir(origin, is_package)
    parent, _, _ = name.rpartition(".")
    if not parent:
        return where in sys.path
    return where in (getattr(sys.modules.get(parent), "__path__", None) or ())


def install(cache_dir: str | None) -> ModuleCache | None:
    """Serve this run's imports from the module file in ``cache_dir``; write it back at exit."""
    if not cache_dir or os.environ.get("PI_HOST_NO_CODE_CACHE") or os.environ.get("PI_HOST_NO_MODULE_CACHE"):
        return None
    import atexit

    tag = f"{sys.implementation.cache_tag}-{sys.hexversion:x}"
    cache = ModuleCache(os.path.join(cache_dir, f"modules-v{FORMAT}-{tag}.marshal"))
    sys.meta_path.insert(0, cache)
    atexit.register(cache.save)
    return cache
