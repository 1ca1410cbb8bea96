"""Code that the standard library compiles from text at start-up, kept between runs (issue 16).

Two things compile source text on every run, the same text each time:

* every ``@dataclass`` writes its ``__init__``, ``__repr__``, ``__eq__``... as source and compiles
  it (about 500 compilations on a ``-p`` run: pi-host's classes, pydantic's, anyio's, h11's);
* ``typing.ForwardRef`` compiles each string annotation pydantic resolves (about 900);
* ``re`` compiles each regular expression a module builds at import (about 60: h11's, ``platform``'s,
  ``logging``'s, pi-host's), in pure Python, ~0.1-0.3 ms each.

Together that is 60-90 ms of a run that takes a few hundred. Like ``__pycache__`` for modules,
this keeps the code objects in ``<cache dir>/compiled-v2-<python tag>.marshal`` (each one
marshalled on its own, so a run unmarshals only those it uses): ``dataclasses`` gets an ``exec``
and ``typing`` a ``compile`` that look the exact text up first (the text and mode are the key,
so a hit is what compiling would have produced) and compile only what is new. For a regular
expression, what is kept is what ``re``'s compiler hands the C engine (``_sre.compile``'s
arguments, recorded as it calls it), keyed by the pattern and flags; a hit calls the engine with
them directly.
The file is rewritten at exit, atomically, only when something new was compiled; an unreadable
file counts as empty. ``PI_HOST_NO_CODE_CACHE=1`` turns it off.
"""

from __future__ import annotations

import _thread
import atexit
import builtins
import contextlib
import marshal
import os
import sys
from typing import Any

MAX_ENTRIES = 8000
"""Beyond this the file keeps only the entries of the run that writes it."""

MAX_NEW_REGEXES = 1000
"""Regular expressions one process adds at most: start-up compiles a few hundred; a long session
may compile patterns made from its input (a search tool's), which are not worth keeping."""

_real_exec = builtins.exec
_real_compile = builtins.compile
REGEX_KEY = "re"


class CodeCache:
    def __init__(self, path: str) -> None:
        self.path = path
        self.known: dict[tuple[str, str], Any] = {}
        self.used: dict[tuple[str, str], Any] = {}
        self.new = False
        self.regexes_recorded = 0
        try:
            with open(path, "rb") as handle:
                # (loads of the bytes: marshal.load on a file reads it in many small calls,
                # 15-25 ms here against 3 ms)
                loaded = marshal.loads(handle.read())
            if isinstance(loaded, dict):
                self.known = loaded
        except (OSError, EOFError, ValueError, TypeError):
            pass

    def _code(self, source: str, mode: str) -> Any:
        key = (mode, source)
        code = self.known.get(key)
        if code is None:
            code = self.known[key] = _real_compile(source, "<string>", mode)
            self.new = True
        elif isinstance(code, bytes):  # each entry is kept marshalled: a run loads only its own
            code = self.known[key] = marshal.loads(code)
        self.used[key] = code
        return code

    def exec(self, source: Any, globals: Any = None, locals: Any = None, /) -> None:  # noqa: A002
        """``exec`` for ``dataclasses``: source text is compiled through the cache."""
        if isinstance(source, str):
            source = self._code(source, "exec")
        return _real_exec(source, globals, locals)

    def compile(self, source: Any, filename: Any, mode: str, *args: Any, **kwargs: Any) -> Any:
        """``compile`` for ``typing``: plain ``<string>`` compilations go through the cache."""
        if isinstance(source, str) and filename == "<string>" and not args and not kwargs:
            return self._code(source, mode)
        return _real_compile(source, filename, mode, *args, **kwargs)

    def regex(self, pattern: Any, flags: int = 0) -> Any:
        """``re._compiler.compile`` through the cache (string patterns; not ``re.DEBUG``)."""
        if not isinstance(pattern, (str, bytes)) or flags & _re_debug:
            return _real_regex(pattern, flags)
        key = (REGEX_KEY, pattern, flags)
        arguments = self.known.get(key)
        if isinstance(arguments, bytes):
            with contextlib.suppress(EOFError, ValueError, TypeError):
                arguments = marshal.loads(arguments)
        if isinstance(arguments, tuple) and arguments and arguments[0] == pattern:
            try:
                compiled = _engine.real_compile(*arguments)
            except (TypeError, ValueError, RuntimeError, OverflowError):
                pass  # not what this engine takes (a damaged file): compile it again
            else:
                self.known[key] = self.used[key] = arguments
                return compiled
        with _compiling:  # (what the engine was handed must be this pattern's, not another thread's)
            _engine.last = ()
            compiled = _real_regex(pattern, flags)
            if _engine.last and self.regexes_recorded < MAX_NEW_REGEXES:
                self.regexes_recorded += 1
                self.known[key] = self.used[key] = _engine.last
                self.new = True
        return compiled

    def save(self) -> None:
        if not self.new:
            return
        keep = self.known if len(self.known) <= MAX_ENTRIES else self.used
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            entries = {k: v if isinstance(v, bytes) else marshal.dumps(v) for k, v in keep.items()}
            with open(tmp, "wb") as handle:
                handle.write(marshal.dumps(entries))
            os.replace(tmp, self.path)
        except (OSError, ValueError):
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def install(cache_dir: str | None) -> CodeCache | None:
    """Route ``dataclasses``' and ``typing``'s compilations through the cache in ``cache_dir``."""
    if not cache_dir or os.environ.get("PI_HOST_NO_CODE_CACHE"):
        return None

    tag = f"{sys.implementation.cache_tag}-{sys.hexversion:x}"
    cache = CodeCache(
        os.path.join(cache_dir, f"compiled-v2-{tag}.marshal")
    )  # v2: entries marshalled one by one
    # Module globals are found before builtins: only these two modules see the cached versions.
    _route_regexes(cache)  # first: dataclasses and typing compile regexes of their own
    import dataclasses
    import typing

    dataclasses.exec = cache.exec  # type: ignore[attr-defined]
    typing.compile = cache.compile  # type: ignore[attr-defined]
    atexit.register(cache.save)
    return cache


class _RecordingEngine:
    """``re._compiler``'s view of ``_sre``: the same module, with ``compile`` noting its arguments."""

    def __init__(self, engine: Any) -> None:
        self.__dict__.update((k, v) for k, v in vars(engine).items() if k != "compile")
        self.real_compile = engine.compile
        self.last: tuple = ()

    def compile(self, *arguments: Any) -> Any:
        compiled = self.real_compile(*arguments)
        with contextlib.suppress(TypeError, ValueError):
            # (opcodes are int subclasses, which marshal refuses: kept as plain ints)
            pattern, flags, code, groups, groupindex, indexgroup = arguments
            self.last = (
                pattern,
                int(flags),
                [int(op) for op in code],
                int(groups),
                {str(k): int(v) for k, v in groupindex.items()},
                tuple(indexgroup),
            )
        return compiled


_engine: _RecordingEngine
_compiling = _thread.RLock()  # (re-entered when compiling imports a module that compiles one)
_real_regex: Any = None
_re_debug = 128


def _route_regexes(cache: CodeCache) -> None:
    """Send ``re``'s compilations through ``cache`` (CPython's ``re`` layout only; else leave it)."""
    global _engine, _real_regex, _re_debug
    import re

    compiler = getattr(re, "_compiler", None)
    engine = getattr(compiler, "_sre", None)
    if engine is None or not callable(getattr(compiler, "compile", None)) or _real_regex is not None:
        return
    _engine, _real_regex, _re_debug = _RecordingEngine(engine), compiler.compile, int(re.DEBUG)
    compiler._sre = _engine  # noqa: SLF001 (the module global its compile() calls)
    compiler.compile = cache.regex
