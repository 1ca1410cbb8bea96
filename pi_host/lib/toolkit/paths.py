"""Turning a model-supplied path into a file path (reference §5.1).

Models paste paths from chat (``@src/a.py``), from the shell (``~/x``) and from screenshots whose
names hold unusual spaces. :func:`resolve_path` normalises those; :func:`read_path_candidates`
adds the spellings ``read`` retries when the first one does not exist.
"""

from __future__ import annotations

import os
import re
import unicodedata

_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_NARROW_NBSP = "\u202f"


def normalize_path_text(path: str) -> str:
    """Strip a leading ``@`` and turn Unicode spaces into ASCII spaces."""
    if path.startswith("@"):
        path = path[1:]
    return _UNICODE_SPACES.sub(" ", path)


def expand_home(path: str) -> str:
    if path == "~":
        return os.path.expanduser("~")
    if path.startswith("~/"):
        return os.path.join(os.path.expanduser("~"), path[2:])
    return path


def resolve_path(path: str, cwd: str) -> str:
    """An absolute path for ``path`` as the model wrote it, relative paths against ``cwd``."""
    path = expand_home(normalize_path_text(path))
    if not os.path.isabs(path):
        path = os.path.join(cwd, path)
    return os.path.normpath(path)


def read_path_candidates(path: str, cwd: str) -> list[str]:
    """The resolved path, then the alternative spellings ``read`` tries when it is missing:
    macOS screenshot names (narrow no-break space before ``AM.``/``PM.``), the NFD form, a
    typographic apostrophe, and NFD with the apostrophe. Duplicates are removed."""
    first = resolve_path(path, cwd)
    variants = [
        first,
        re.sub(r" (AM|PM)\.", _NARROW_NBSP + r"\1.", first),
        unicodedata.normalize("NFD", first),
        first.replace("'", "\u2019"),
        unicodedata.normalize("NFD", first).replace("'", "\u2019"),
    ]
    unique: list[str] = []
    for candidate in variants:
        if candidate not in unique:
            unique.append(candidate)
    return unique


def display_path(path: str, cwd: str) -> str:
    """``path`` relative to ``cwd`` when it lies inside it, else unchanged (for messages)."""
    try:
        relative = os.path.relpath(path, cwd)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative
