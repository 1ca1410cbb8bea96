"""Code that the standard library compiles from text at start-up, kept between runs (issue 16).

Two things compile source text on every run, the same text each time:

* every ``@dataclass`` writes its ``__init__``, ``__repr__``, ``__eq__``... as source and compiles
  it (about 500 compilations on a ``-p`` run: pi-host's classes, pydantic's, anyio's, h11's);
* ``typing.ForwardRef`` compiles each string annotation pydantic resolves (about 900).

Together that is 60-90 ms of a run that takes a few hundred. Like ``__pycache__`` for modules,
this keeps the code objects in ``<cache dir>/compiled-v2-<python tag>.marshal`` (each one
marshalled on its own, so a run unmarshals only those it uses): ``dataclasses`` gets an ``exec``
and ``typing`` a ``compile`` that look the exact text up first (the text and mode are the key,
so a hit is what compiling would have produced) and compile only what is new.
The file is rewritten at exit, atomically, only when something new was compiled; an unreadable
file counts as empty. ``PI_HOST_NO_CODE_CACHE=1`` turns it off.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import marshal
import os
import sys
from typing import Any

MAX_ENTRIES = 8000
"""Beyond this the file keeps only the entries of the run that writes it."""

_real_exec = builtins.exec
_real_compile = builtins.compile


class CodeCache:
    def __init__(self, path: str) -> None:
        self.path = path
        self.known: dict[tuple[str, str], Any] = {}
        self.used: dict[tuple[str, str], Any] = {}
        self.new = False
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
    import dataclasses
    import typing

    tag = f"{sys.implementation.cache_tag}-{sys.hexversion:x}"
    cache = CodeCache(
        os.path.join(cache_dir, f"compiled-v2-{tag}.marshal")
    )  # v2: entries marshalled one by one
    # Module globals are found before builtins: only these two modules see the cached versions.
    dataclasses.exec = cache.exec  # type: ignore[attr-defined]
    typing.compile = cache.compile  # type: ignore[attr-defined]
    atexit.register(cache.save)
    return cache
